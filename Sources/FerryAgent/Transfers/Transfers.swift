import CCurl
import CFerryShim
import FerryCore
import FoundationEssentials
import Glibc

/// The agent loop's side of the transfers: it hands each task's attempt to a transfer thread
/// (`Carrier`) and turns what the threads report into agent inputs, a batch of reports in one
/// turn. Where an attempt runs (`place`) keeps connections shared: an https host's transfers
/// on one thread (HTTP/2 multiplexes them on one connection), a plain http one on the thread
/// with the fewest (where one just ended and left its connection), a session's cookies on the
/// first thread (their share handle is its). A task stopped on a thread starts again there, so
/// the commands about one attempt and the next are carried out in the order the loop gave them.
final class Transfers {
    /// Made for the first transfer: libcurl's global set-up (OpenSSL's, mostly) takes 2.4 MiB
    /// of memory, which an agent that has transferred nothing yet does without.
    private var carriers: [Carrier] = []
    private var limits: (total: Int, host: Int)
    /// Wraps each batch of reports (the agent makes it one turn).
    var around: (() -> Void) -> Void = { $0() }
    private let settings: TransferSettings
    private let stateDirectory: String
    /// Each task's attempt under way (being made or running) and the thread it runs on.
    private var attempts: [Int64: (attempt: UInt64, carrier: Int, jar: String?)] = [:]
    private var lastAttempt: UInt64 = 0
    /// Attempts under way on each thread.
    private var load: [Int] = []
    /// The thread each task's last stopped attempt ran on (its stop may still be under way there).
    private var stoppedOn: [Int64: Int] = [:]
    /// Makes each task's transfer (its proxy, its staging file) and hands it back to the loop.
    private let starter: TransferStarter
    /// Hands an input to the agent (inside the turn of the batch of reports it came in).
    var feed: (AgentInput) -> Void = { _ in }
    private lazy var reports = Mailbox<CarrierReport>(context: nil) { [unowned self] in absorb($0) }

    init(settings: AgentSettings) {
        self.settings = settings.transfer
        stateDirectory = settings.stateDirectory
        starter = TransferStarter(settings: settings.transfer, stateDirectory: settings.stateDirectory)
        limits = (settings.core.maxTotal, settings.core.maxPerHost)
        starter.onMade = { [unowned self] id, made in self.made(id, made) }
    }

    /// The desktop's proxy answers go with the network they were given on (once any was asked).
    func networkChanged() { if !carriers.isEmpty { starter.networkChanged() } }

    /// The user changed how many transfers may run (the settings). Each thread's curl gets the
    /// agent's limits: the core's scheduler keeps them over all threads.
    func setLimits(total: Int, host: Int) {
        limits = (total, host)
        for c in carriers { c.inbox.post(.setLimits(total: total, host: host)) }
    }

    /// The core shared the speed limits out (`SpeedLimits`): each transfer's, bytes per second.
    func limitSpeeds(_ allowances: [Int64: Int64]) {
        for (id, rate) in allowances {
            guard let placed = attempts[id] else { continue }
            carriers[placed.carrier].inbox.post(.limitSpeed(task: id, bytesPerSecond: rate))
        }
    }

    private func setUp() {
        guard carriers.isEmpty else { return }
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))  // here on the loop, before any thread makes a handle
        // A transfer's buffers (curl's and the staging file's, up to 512 kB each) are allocated
        // at its start and freed at its end. glibc would map each from the kernel, or give the
        // heap's top back and grow it again, so every small file touched fresh pages (3 page
        // faults a file of 16 kB): buffers up to 1 MiB come from the heap, 16 MiB freed stays.
        ferry_keep_freed_memory(1 << 20, 16 << 20)
        let reports = reports
        let count = CarrierCount.chosen
        load = Array(repeating: 0, count: count)
        carriers = (0..<count).map {
            Carrier(
                named: "ferry-curl-\($0)", settings: settings, stateDirectory: stateDirectory, limits: limits,
                reports: reports)
        }
    }

    /// Starts an attempt: the proxy is looked up on the loop, the staging file is made by the
    /// transfer thread (or a worker: see `TransferStarter`), and curl runs it there. One that
    /// cannot even begin comes back as `transferCouldNotStart` (ENOSPC waits for space, the rest
    /// fails clearly).
    func start(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan, credential: Credential?) {
        setUp()
        lastAttempt += 1
        let carrier = place(r, plan)
        attempts[r.id] = (lastAttempt, carrier, plan.cookieJar)
        load[carrier] += 1
        starter.start(r, plan, credential: credential)
    }

    /// The thread an attempt runs on (see the type's comment).
    private func place(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan) -> Int {
        if carriers.count == 1 || plan.cookieJar != nil { return 0 }
        if let thread = stoppedOn[r.id] { return thread }
        if plan.url.lowercased().hasPrefix("https:") {
            return Int(UInt(bitPattern: r.host.lowercased().hashValue) % UInt(carriers.count))
        }
        return load.indices.min { load[$0] < load[$1] } ?? 0
    }

    /// The attempt of the task is over for the loop (ended, failed to start, stopped).
    @discardableResult
    private func finished(_ id: Int64) -> (attempt: UInt64, carrier: Int, jar: String?)? {
        guard let placed = attempts.removeValue(forKey: id) else { return nil }
        load[placed.carrier] -= 1
        return placed
    }

    private func made(_ id: Int64, _ made: TransferStarter.Made) {
        guard let placed = attempts[id] else { return }
        let inbox = carriers[placed.carrier].inbox
        var start = TransferStart(attempt: placed.attempt, staging: "", credential: nil, proxy: nil, jar: placed.jar)
        switch made {
        case .toMake(let r, let plan, let staging, let credential, let proxy):
            (start.staging, start.credential, start.proxy) = (staging, credential, proxy)
            inbox.post(.make(r, plan, start))
        case .ready(let t):
            inbox.post(.run(t, start))
        case .failed(let outcome):
            finished(id)
            feed(.transferCouldNotStart(task: id, outcome))
        }
    }

    /// An invalidated session's cookies: a new session of that name starts without them.
    func forgetCookies(_ jar: String) { carriers.first?.inbox.post(.forgetCookies(jar: jar)) }

    /// The core's decision on a response's body, for the thread whose transfer waits for it.
    func continueBody(_ id: Int64, _ decision: TaskMachine.BodyDecision) {
        guard let placed = attempts[id] else { return }
        carriers[placed.carrier].inbox.post(.continueBody(task: id, attempt: placed.attempt, decision))
    }

    /// Detaches a transfer; its thread syncs its bytes to disk. A later attempt of the task runs
    /// on the same thread, after this.
    func stop(_ id: Int64) {
        guard let placed = finished(id) else { return }
        _ = starter.stop(id)
        stoppedOn[id] = placed.carrier
        carriers[placed.carrier].inbox.post(.stop(task: id))
    }

    /// Closes every cached connection (the network they ran over changed); only when idle.
    func dropConnections() {
        guard attempts.isEmpty else { return }
        for c in carriers { c.inbox.post(.dropConnections) }
    }

    /// Detaches every transfer (the agent stops): the bytes each has on disk. Waits for the
    /// transfer threads, which the loop does only here.
    func stopAll() -> [Int64: Int64] {
        for id in Array(attempts.keys) {
            _ = starter.stop(id)
            finished(id)
        }
        var out: [Int64: Int64] = [:]
        for c in carriers {
            let answer = CarrierAnswer<[Int64: Int64]>()
            c.inbox.post(.stopAll(answer))
            out.merge(answer.wait()) { a, _ in a }
        }
        return out
    }

    /// A batch of the threads' reports, in one turn: those of attempts since stopped are dropped.
    private func absorb(_ batch: [CarrierReport]) {
        around { [self] in
            for r in Self.markingEnds(batch) where attempts[r.task]?.attempt == r.attempt {
                switch r.input {
                case .transferEnded, .transferCouldNotStart:
                    finished(r.task)
                    stoppedOn[r.task] = nil  // its thread carried out the stop before this
                default: break
                }
                feed(r.input)
            }
        }
    }

    /// The batch, each head that went ahead marked with the bytes its attempt ended with where
    /// that end is in the batch too: a fact for the core (`ResponseHead.endedWith`), which
    /// decides what it means.
    static func markingEnds(_ batch: [CarrierReport]) -> [CarrierReport] {
        var ends: [Attempt: Int64] = [:]
        for r in batch {
            if case .transferEnded(let task, let received, _) = r.input {
                ends[Attempt(r.attempt, of: task)] = received
            }
        }
        guard !ends.isEmpty else { return batch }
        return batch.map { r in
            guard case .responseBegan(let task, var head) = r.input, head.wentAhead,
                let bytes = ends[Attempt(r.attempt, of: task)]
            else { return r }
            head.endedWith = bytes
            return CarrierReport(task: r.task, attempt: r.attempt, input: .responseBegan(task: task, head))
        }
    }

    private struct Attempt: Hashable {
        var number: UInt64
        var task: Int64
        init(_ number: UInt64, of task: Int64) { (self.number, self.task) = (number, task) }
    }
}
