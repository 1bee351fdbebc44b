import Dispatch
import FerryCore
import Glibc

/// Makes a task's transfer. The desktop's proxy for its URL comes first (GIO's resolver answers
/// on the loop: at once when there is no desktop resolver, and curl reads the environment);
/// then the staging file or the upload's file is prepared: on the loop when that only creates
/// a new, empty file on this machine's disk, else on a worker thread (an upload's file, a
/// resume, a preallocation, a staging folder on a network file system, where one open(2) waits
/// for a server). The made transfer, or why it could not be, comes back on the loop, never
/// inside the call that started it; a start stopped meanwhile is dropped.
final class TransferStarter {
    /// A transfer made, handed to the loop (it is used by one thread at a time).
    enum Made: @unchecked Sendable {
        case ready(Transfer)
        case failed(TransferOutcome)
    }

    private let settings: TransferSettings
    private let stagingFolder: StateFolder
    /// Whether the staging folder is on this machine's disk (see `LocalFileSystem`).
    private let stagingIsLocal: Bool
    /// Starts under way, each with its number: a late answer for a start since stopped is dropped.
    private var pending: [Int64: UInt64] = [:]
    private var starts: UInt64 = 0
    /// The desktop's proxy for each request (made with the first transfer: it loads GIO's modules).
    private lazy var proxies = ProxyLookup()
    private let worker = DispatchQueue(label: "dev.ferry.agent.staging")
    /// Transfers made on the worker come back to the loop in batches.
    private lazy var handoff = LoopHandoff<(Int64, Made)>(queue: worker) { [weak self] batch in
        for (id, made) in batch { self?.deliver(id, made) }
        self?.afterBatch()
    }
    /// A start's result, on the loop (only for starts not stopped meanwhile).
    var onMade: (Int64, Made) -> Void = { _, _ in }
    /// After a batch from the worker was handed over (curl is told to look at its handles).
    var afterBatch: () -> Void = {}

    init(settings: TransferSettings, stateDirectory: String) {
        self.settings = settings
        stagingFolder = StateFolder(stateDirectory)
        stagingIsLocal = LocalFileSystem.holds(stagingFolder.staging)
    }

    func start(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan, credential: Credential?) {
        starts += 1
        let start = starts
        pending[r.id] = start
        proxies.lookup(plan.url) { [weak self] answer in
            guard let self, self.pending[r.id] == start else { return }  // stopped meanwhile
            switch answer {
            case .curlDecides: self.make(r, plan, credential: credential, proxy: nil)
            case .use(let proxy): self.make(r, plan, credential: credential, proxy: proxy)
            case .failed(let why):
                // CURLE_COULDNT_RESOLVE_PROXY
                var outcome = TransferOutcome(curlCode: 5, curlMessage: why, httpStatus: 0)
                outcome.proxy = "from the desktop's settings"
                self.deliver(r.id, .failed(outcome))
            }
        }
    }

    /// Stops a start under way; false when there is none for the task.
    func stop(_ id: Int64) -> Bool { pending.removeValue(forKey: id) != nil }

    /// The desktop's proxy answers go with the network they were given on.
    func networkChanged() { proxies.forget() }

    private func make(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan, credential: Credential?, proxy: ProxyChoice?) {
        let s = settings
        let staging = stagingFolder.staged(r.id)
        if stagingIsLocal && Transfer.onlyCreatesStaging(r, plan) {
            let made = Self.make(r, plan, staging: staging, credential: credential, proxy: proxy, settings: s)
            if case .ready = made {
                deliver(r.id, made)
            } else {
                MainLoop.idle { [weak self] in self?.deliver(r.id, made) }
            }
            return
        }
        let handoff = handoff
        worker.async {
            handoff.post(
                (r.id, Self.make(r, plan, staging: staging, credential: credential, proxy: proxy, settings: s)))
        }
    }

    private static func make(
        _ r: TaskRecord, _ plan: TaskMachine.TransferPlan, staging: String,
        credential: Credential?, proxy: ProxyChoice?, settings: TransferSettings
    ) -> Made {
        do {
            return .ready(
                try Transfer(
                    taskID: r.id, record: r, plan: plan, stagingPath: staging, credential: credential,
                    proxy: proxy, settings: settings))
        } catch let e as TransferStartFailure {
            return .failed(.localFailure(errno: e.errno, message: e.message))
        } catch {
            return .failed(.localFailure(errno: EACCES, message: "\(error)"))
        }
    }

    private func deliver(_ id: Int64, _ made: Made) {
        guard pending.removeValue(forKey: id) != nil else { return }  // stopped meanwhile: the transfer is dropped
        onMade(id, made)
    }
}
