import Dispatch
import FerryCore
import Glibc

/// Prepares a task's transfer. The desktop's proxy for its URL comes first (GIO's resolver
/// answers on the loop: at once when there is no desktop resolver, and curl reads the
/// environment); then the staging file or the upload's file: by the transfer thread that runs
/// it when that only creates a new, empty file on this machine's disk, else on a worker thread
/// (an upload's file, a resume, a preallocation, a staging folder on a network file system,
/// where one open(2) waits for a server). The result comes back on the loop; a start stopped
/// meanwhile is dropped.
final class TransferStarter {
    /// A transfer made, handed to the loop (it is used by one thread at a time).
    enum Made: @unchecked Sendable {
        case ready(Transfer)
        case failed(TransferOutcome)
        /// To be made by its transfer thread (a new staging file on this machine's disk).
        case toMake(TaskRecord, TaskMachine.TransferPlan, staging: String, Credential?, ProxyChoice?)

        init(_ made: Result<Transfer, TransferStartFailure>) {
            switch made {
            case .success(let t): self = .ready(t)
            case .failure(let e): self = .failed(e.outcome)
            }
        }
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
    }
    /// A start's result, on the loop (only for starts not stopped meanwhile).
    var onMade: (Int64, Made) -> Void = { _, _ in }

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
            deliver(r.id, .toMake(r, plan, staging: staging, credential, proxy))
            return
        }
        let handoff = handoff
        worker.async {
            handoff.post(
                (r.id, Made(Self.make(r, plan, staging: staging, credential: credential, proxy: proxy, settings: s))))
        }
    }

    /// Makes the transfer (on the thread that opens its files): it, or how it could not start.
    static func make(
        _ r: TaskRecord, _ plan: TaskMachine.TransferPlan, staging: String,
        credential: Credential?, proxy: ProxyChoice?, settings: TransferSettings
    ) -> Result<Transfer, TransferStartFailure> {
        do {
            return .success(
                try Transfer(
                    taskID: r.id, record: r, plan: plan, stagingPath: staging, credential: credential,
                    proxy: proxy, settings: settings))
        } catch let e as TransferStartFailure {
            return .failure(e)
        } catch {
            return .failure(TransferStartFailure(errno: EACCES, message: "\(error)"))
        }
    }

    private func deliver(_ id: Int64, _ made: Made) {
        guard pending.removeValue(forKey: id) != nil else { return }  // stopped meanwhile: the transfer is dropped
        onMade(id, made)
    }
}
