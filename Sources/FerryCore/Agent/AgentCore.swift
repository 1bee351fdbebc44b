/// Every decision of the agent, as a value: an input and the time go in, effects come out.
/// It holds what the agent keeps in memory (the scheduler, machines of running tasks, event
/// queues, sessions, connected clients, relaunch policies, the badge); the task queue itself
/// stays in the store and is read through an `AgentLedger`. No C, no I/O, no clock.
///
/// Effects of one loop turn commit together (group commit). When the store cannot commit,
/// `commitFailed` puts memory back to what the store says and the changed tasks wait for it.
public struct AgentCore: Sendable {
    public struct Settings: Sendable {
        /// The state folder (for the names of inboxes and quarantined bytes in messages).
        public var stateDirectory: String
        public var maxTotal = 6
        public var maxPerHost = 2
        public var backoff = Backoff()
        /// The agent's limit for a silent connection; a session's request timeout may lower it.
        public var stallSeconds = 60
        /// ferryd --download-dir: wins over a session's default folder.
        public var downloadDirectory: String?
        /// First look at a full disk (or a refusing store) again after this long, µs.
        public var spaceRecheck: Int64 = 30_000_000
        /// Ended tasks leave the list after this long, µs (0: never).
        public var keepEnded: Int64 = 30 * 86_400 * 1_000_000
        public init(stateDirectory: String) { self.stateDirectory = stateDirectory }
    }

    public let settings: Settings
    var scheduler: Scheduler
    /// Machines of running tasks (and of tasks being saved); every other task lives in the store.
    var machines: [Int64: TaskMachine] = [:]
    /// Tasks with a transfer attached in the shell.
    var attached: Set<Int64> = []
    /// Tasks whose file is being verified and moved into place.
    var finalizing: Set<Int64> = []
    /// Tasks whose last change the store refused: they wait until it commits again.
    var storeBlocked: Set<Int64> = []
    /// Tasks the user was told wait for disk space (one popup each, not one per recheck).
    var spaceWarned: Set<Int64> = []
    /// Answers to challenges: memory only, never stored, gone when the task ends.
    var credentials: [Int64: Credential] = [:]
    var sessions: [String: SessionConfig] = [:]
    /// Bus peers that opened each session and are still on the bus.
    var clients: [String: Set<String>] = [:]
    var relaunch: [String: RelaunchPolicy] = [:]
    var queues: [String: EventQueue] = [:]
    /// Sequence numbers reserved in the store per session (see `append`).
    var reservedSeq: [String: UInt64] = [:]
    var network = NetworkState()
    var networkKnown = false
    public internal(set) var badge = 0
    var lastTaskID: Int64 = 0
    /// Tasks that may have bytes in staging: those there at the start, started or handed bytes
    /// since (nil: unknown, ask the ledger). Spares a stat(2) per start that almost always
    /// finds nothing.
    var mayHaveStaged: Set<Int64>?
    var lastPrune: Int64 = 0
    /// Sessions with new events since the last EventsAvailable.
    var signalsPending: [String] = []
    /// Running tasks whose bytes moved since the last TasksProgressed (a hint for live views:
    /// not journaled, a lost entry only delays a figure).
    var progressMoved: Set<Int64> = []
    /// Running tasks whose row changed without a change of state (their response's headers came:
    /// size, name): live views hear of it on the same wake as of their bytes.
    var rowsChanged: Set<Int64> = []
    /// Wakes armed and not yet due (the shell keeps one of each).
    var armed: Set<AgentWake> = []
    var retryArmedAt: Int64?
    /// Attached transfers' stall watches (see AgentCore+Stalls; not journaled: a lost entry is
    /// made again at the next check).
    var stallWatches: [Int64: StallWatch] = [:]
    var stallArmedAt: Int64?

    /// The effects of the input being handled.
    var out: [AgentEffect] = []
    /// What memory looked like before the open turn (see `commitFailed`).
    var journal: Journal?
    /// The time of the input being handled.
    var now: Int64 = 0

    public init(settings: Settings) {
        self.settings = settings
        scheduler = Scheduler(maxTotal: settings.maxTotal, maxPerHost: settings.maxPerHost)
    }

    /// The one entry point: what an input means, as effects. A request's answer is its `.reply`
    /// effect; a refused request throws and changes nothing.
    public mutating func handle(_ input: AgentInput, now: Int64, ledger: AgentLedger) throws -> [AgentEffect] {
        self.now = now
        if journal == nil { journal = Journal(self) }
        out = []
        switch input {
        case .started(let state): started(state, ledger)
        case .request(let r):
            let reply: AgentReply
            do {
                reply = try request(r, ledger)
            } catch {
                out = []
                throw error
            }
            out.append(.reply(reply))
        case .responseBegan(let id, let head): responseBegan(id, head, ledger)
        case .progressed(let id, let received): progressed(id, received, ledger)
        case .transferEnded(let id, let received, let outcome): transferEnded(id, received: received, outcome, ledger)
        case .transferCouldNotStart(let id, let outcome): transferCouldNotStart(id, outcome, ledger)
        case .finalized(let id, let result): finalized(id, result, ledger)
        case .wake(let wake): woke(wake, ledger)
        case .networkChanged(let state): networkChanged(state, ledger)
        case .peerLeft(let peer): peerLeft(peer)
        case .appLaunched(let session, let pid): appLaunched(session, pid: pid)
        case .appLaunchFailed(let session, let message): appLaunchFailed(session, message)
        case .appExited(let session, let status): appExited(session, status: status)
        case .popupActivated: resetBadge()
        case .stopping(let received): stopping(received)
        }
        let effects = out
        out = []
        return effects
    }

    private mutating func woke(_ wake: AgentWake, _ ledger: AgentLedger) {
        armed.remove(wake)
        switch wake {
        case .schedule: schedule(ledger)
        case .signals: flushSignals(ledger)
        case .retry: retryDue(ledger)
        case .storeRecheck: storeRecheck()
        case .launcher:
            out.append(.launcherChanged)
            reportProgress()
        case .relaunch(let session): considerLaunch(session)
        case .pendingLaunches: for id in queues.keys.sorted() { considerLaunch(id) }
        case .prune: pruneEndedTasks(ledger)
        case .stall: checkStalls(ledger)
        }
    }

    /// Asks to be woken at `at` (nil: when the loop is idle) unless such a wake is pending.
    mutating func wake(_ wake: AgentWake, at: Int64? = nil) {
        guard armed.insert(wake).inserted else { return }
        out.append(.wake(wake, at: at))
    }

    /// One wake for the earliest of many moments (retries, stalls): asks to be woken at `at`
    /// unless that wake is already due no later; `dueAt` remembers when it is due.
    mutating func wake(_ wake: AgentWake, noLaterThan at: Int64, dueAt: WritableKeyPath<AgentCore, Int64?>) {
        if let due = self[keyPath: dueAt], due <= at { return }
        self[keyPath: dueAt] = at
        armed.remove(wake)
        self.wake(wake, at: at)
    }

    mutating func log(_ level: LogLevel, _ message: String) { out.append(.log(level, message)) }

    // MARK: - Start

    private mutating func started(_ s: AgentStartState, _ ledger: AgentLedger) {
        queues = s.queues
        sessions = s.sessions
        badge = s.badge
        lastTaskID = s.lastTaskID
        mayHaveStaged = s.staged
        for (id, q) in queues { reservedSeq[id] = q.lastSeq }
        out.append(.launcherChanged)   // docks want the current state from a (re)started agent
        networkChanged(s.network, ledger)   // tasks that waited for it before a restart try again
        armRetry(ledger)
        wake(.schedule)
        wake(.prune)   // after the first answers
        // Events that waited across a restart may need their app. Apps still running reopen
        // their sessions when they see the new agent: give them a moment first.
        wake(.pendingLaunches, at: now + 2_000_000)
    }

    private mutating func stopping(_ received: [Int64: Int64]) {
        for (id, bytes) in received.sorted(by: { $0.key < $1.key }) {
            guard var m = machines[id] else { continue }
            _ = m.progressed(received: bytes, now: now)
            machines[id] = nil
            out.append(.store(.update(m.record)))
        }
        attached.removeAll()
    }

    // MARK: - Turns

    /// The turn's store writes are durable.
    public mutating func committed() {
        if let done = journal?.completed, !done.isEmpty { mayHaveStaged?.subtract(done) }
        journal = nil
    }

    /// The store refused the turn's writes: memory goes back to what the store says. A transfer
    /// the turn stopped keeps running; one it started never starts; a task left without its
    /// transfer waits until the store commits again, then continues from its bytes. Events of
    /// the turn are forgotten (their numbers are never reused: they were reserved before).
    public mutating func commitFailed(now: Int64) -> [AgentEffect] {
        guard let j = journal else { return [] }
        journal = nil
        self.now = now
        out = []
        for (session, seq) in j.lastSeq { queues[session]?.rollBack(after: seq) }
        // Transfers that ended or saves that finished during the turn are gone in the shell.
        attached = j.attached.subtracting(j.detached)
        finalizing = j.finalizing.subtracting(j.finalized)
        sessions = j.sessions
        badge = j.badge
        credentials = j.credentials
        spaceWarned = j.spaceWarned
        signalsPending = j.signalsPending
        storeBlocked = j.storeBlocked
        lastTaskID = j.lastTaskID
        for (id, before) in j.machines {
            if attached.contains(id) || finalizing.contains(id) {
                machines[id] = before
            } else {
                machines[id] = nil
                storeBlocked.insert(id)
            }
        }
        // The running tasks' scheduler slots follow what is attached after all.
        var s = Scheduler(maxTotal: settings.maxTotal, maxPerHost: settings.maxPerHost)
        for id in attached { if let r = machines[id]?.record { s.started(host: r.host, session: r.session) } }
        scheduler = s
        if !storeBlocked.isEmpty { wake(.storeRecheck, at: now + settings.spaceRecheck) }
        out.append(.launcherChanged)
        let effects = out
        out = []
        return effects
    }

    /// Memory before the open turn, except the event queues (they roll back by sequence number:
    /// copying them would copy every queued event once per turn).
    struct Journal: Sendable {
        var machines: [Int64: TaskMachine] = [:]
        var lastSeq: [String: UInt64] = [:]
        let attached: Set<Int64>, finalizing: Set<Int64>, storeBlocked: Set<Int64>, spaceWarned: Set<Int64>
        var detached: Set<Int64> = [], finalized: Set<Int64> = []
        /// Completed in the turn: their staged bytes are gone once it commits (not before).
        var completed: Set<Int64> = []
        let sessions: [String: SessionConfig]
        let credentials: [Int64: Credential]
        let signalsPending: [String]
        let badge: Int
        let lastTaskID: Int64

        init(_ core: AgentCore) {
            attached = core.attached; finalizing = core.finalizing; storeBlocked = core.storeBlocked
            spaceWarned = core.spaceWarned; sessions = core.sessions
            credentials = core.credentials; signalsPending = core.signalsPending; badge = core.badge
            lastTaskID = core.lastTaskID
        }
    }

    /// Remembers a task's machine (and its session's last event) before the turn first changes it.
    mutating func touch(_ id: Int64, before: TaskMachine) {
        guard journal != nil, journal!.machines[id] == nil else { return }
        journal!.machines[id] = before
        touchQueue(before.record.session)
    }

    mutating func touchQueue(_ session: String) {
        guard journal != nil, journal!.lastSeq[session] == nil else { return }
        journal!.lastSeq[session] = queues[session]?.lastSeq ?? 0
    }

    // MARK: - Queries (pure reads of memory, for the shell)

    /// What docks show: the badge, and the progress (0...1) of all running transfers.
    public var launcherState: (count: Int, progress: Double, transferring: Bool) {
        var received: Int64 = 0, expected: Int64 = 0
        for m in machines.values where m.record.state == .running {
            if let e = m.record.expected, e > 0 { received += m.record.received; expected += e }
        }
        return (badge, expected > 0 ? min(1, Double(received) / Double(expected)) : 0, !attached.isEmpty)
    }

    /// The live record of a running task (progress not yet checkpointed).
    public func liveRecord(_ id: Int64) -> TaskRecord? { machines[id]?.record }

    /// Where a session's finished files wait for its app.
    public static func inbox(stateDirectory: String, session: String) -> String {
        stateDirectory + "/inbox/" + (FileNaming.sanitize(session) ?? "session")
    }

    /// A sandboxed app's inbox is inside its own folder, where it can read what it is handed.
    public static func inbox(appHome: String, session: String) -> String {
        appHome + "/data/ferry/inbox/" + (FileNaming.sanitize(session) ?? "session")
    }

    func inbox(_ session: String, _ c: SessionConfig) -> String {
        c.appHome.isEmpty ? Self.inbox(stateDirectory: settings.stateDirectory, session: session)
            : Self.inbox(appHome: c.appHome, session: session)
    }

    /// Copies of descriptors handed over for upload (CreateUploadFromFd); each goes when its task ends.
    public static func uploadCopies(stateDirectory: String) -> String { stateDirectory + "/uploads/" }

    func isUploadCopy(_ r: TaskRecord) -> Bool {
        r.uploadFile?.hasPrefix(Self.uploadCopies(stateDirectory: settings.stateDirectory)) ?? false
    }

    public static func quarantinePath(stateDirectory: String, task: Int64) -> String {
        "\(stateDirectory)/quarantine/\(task).part"
    }
}
