/// Every decision of the agent, as a value: an input and the time go in, effects come out.
/// A thin composition of small machines, each with its own state and tests: `RunningTasks`
/// (the tasks in memory and the scheduler's slots), `SessionBook` (sessions, their event
/// queues, clients and relaunches), `UserDelivery` (popups, badge, live figures), `WakePlan`
/// (the wakes armed in the shell) and `World` (the network, hints about the disk). The task
/// queue itself stays in the store and is read through an `AgentLedger`. No C, no I/O, no clock.
///
/// Effects of one loop turn commit together (group commit). When the store cannot commit,
/// `commitFailed` puts the whole value back as it was before the turn (`TurnStart`), keeping
/// only what the shell did meanwhile; the changed tasks wait for the store.
public struct AgentCore: Sendable {
    public struct Settings: Sendable {
        /// The state folder (for the names of inboxes and quarantined bytes in messages).
        public var stateDirectory: String
        var state: StateFolder { StateFolder(stateDirectory) }
        public var maxTotal = 6
        public var maxPerHost = 2
        public var backoff = Backoff()
        /// The agent's limit for a silent connection (the core's stall check, not curl's speed
        /// check); a session's request timeout may lower it.
        public var stallSeconds = 60
        /// ferryd --download-dir: wins over a session's default folder.
        public var downloadDirectory: String?
        /// First look at a full disk (or a refusing store) again after this long, µs.
        public var spaceRecheck: Int64 = 30_000_000
        /// Ended tasks leave the list after this long, µs (0: never).
        public var keepEnded: Int64 = 30 * 86_400 * 1_000_000
        /// What one sandboxed app may hold at once.
        public var appLimits = AppLimits()
        /// The user's download folder (the download-folder setting): where a host session's
        /// downloads go when neither the task nor the session names a folder (nil: XDG's).
        public var downloadFolder: String?
        /// The allow-metered setting: off, nothing transfers over a metered network.
        public var allowMetered = true
        public init(stateDirectory: String) { self.stateDirectory = stateDirectory }
    }

    public internal(set) var settings: Settings
    var tasks: RunningTasks
    var sessions = SessionBook()
    var user = UserDelivery()
    /// Facts of the shell and the world: a turn that cannot commit keeps them.
    var wakes = WakePlan()
    var world = World()
    /// Credentials kept for sessions, and the keyring's part in tasks' challenges.
    var credentials = CredentialBook()
    /// The effects of the input being handled.
    var out: [AgentEffect] = []
    /// The time of the input being handled.
    var now: Int64 = 0
    /// Memory before the open turn (see `commitFailed`).
    var turnStart: TurnStart?

    public init(settings: Settings) {
        self.settings = settings
        tasks = RunningTasks(maxTotal: settings.maxTotal, maxPerHost: settings.maxPerHost)
    }

    /// The one entry point: what an input means, as effects. A request's answer is its `.reply`
    /// effect; a refused request throws and changes nothing.
    public mutating func handle(_ input: AgentInput, now: Int64, ledger: AgentLedger) throws -> [AgentEffect] {
        self.now = now
        if turnStart == nil { turnStart = TurnStart(self) }
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
        case .uploadResourceAnnounced(let id, let location): resourceAnnounced(id, location, ledger)
        case .transferEnded(let id, let received, let outcome): transferEnded(id, received: received, outcome, ledger)
        case .transferCouldNotStart(let id, let outcome): transferCouldNotStart(id, outcome, ledger)
        case .finalized(let id, let result): finalized(id, result, ledger)
        case .wake(let wake): woke(wake, ledger)
        case .networkChanged(let state): networkChanged(state, ledger)
        case .mountsChanged: mountsChanged(ledger)
        case .peerLeft(let peer): emit(sessions.peerLeft(peer, now: now))
        case .appLaunched(let session, let pid): emit(sessions.appLaunched(session, pid: pid))
        case .appLaunchFailed(let session, let message): emit(sessions.appLaunchFailed(session, message, now: now))
        case .appExited(let session, let status): emit(sessions.appExited(session, status: status, now: now))
        case .popupActivated(let session): emit(user.popupActivated(session, config: session.map(config), now: now))
        case .settingsChanged(let s): settingsChanged(s, ledger)
        case .credentialFound(let id, let c): credentialFound(id, c, ledger)
        case .stopping(let received): stopping(received)
        }
        let effects = out
        out = []
        return effects
    }

    private mutating func woke(_ wake: AgentWake, _ ledger: AgentLedger) {
        wakes.fired(wake)
        switch wake {
        case .schedule: schedule(ledger)
        case .signals: flushSignals(ledger)
        case .retry: retryDue(ledger)
        case .storeRecheck: storeRecheck()
        case .launcher:
            out.append(.launcherChanged)
            reportProgress()
        case .relaunch(let session): emit(sessions.considerLaunch(session, now: now))
        case .pendingLaunches: emit(sessions.considerLaunches(now: now))
        case .prune: pruneEndedTasks(ledger)
        case .stall: checkStalls(ledger)
        }
    }

    /// Asks to be woken at `at` (nil: when the loop is idle) unless such a wake is pending.
    mutating func wake(_ wake: AgentWake, at: Int64? = nil) {
        if let effect = wakes.arm(wake, at: at) { out.append(effect) }
    }

    /// One wake for the earliest of many moments (retries, stalls), see `WakePlan`.
    mutating func wake(_ wake: AgentWake, noLaterThan at: Int64, due: WritableKeyPath<WakePlan, Int64?>) {
        if let effect = wakes.arm(wake, noLaterThan: at, due: due) { out.append(effect) }
    }

    mutating func log(_ level: LogLevel, _ message: String) { out.append(.log(level, message)) }

    /// A machine's effects, into the turn's: a wake it asks for goes through the plan (one of
    /// each armed in the shell).
    mutating func emit(_ effects: [AgentEffect]) {
        for e in effects {
            if case .wake(let w, let at) = e { wake(w, at: at) } else { out.append(e) }
        }
    }

    // MARK: - Start

    private mutating func started(_ s: AgentStartState, _ ledger: AgentLedger) {
        sessions.queues = s.queues
        sessions.configs = s.sessions
        user.badge = s.badge
        tasks.lastTaskID = s.lastTaskID
        world.mayHaveStaged = s.staged
        for (id, q) in s.queues { sessions.reservedSeq[id] = q.lastSeq }
        moveCredentials(outOf: s.urlCredentials)
        out.append(.launcherChanged)  // docks want the current state from a (re)started agent
        networkChanged(s.network, ledger)  // tasks that waited for it before a restart try again
        armRetry(ledger)
        wake(.schedule)
        wake(.prune)  // after the first answers
        // Events that waited across a restart may need their app. Apps still running reopen
        // their sessions when they see the new agent: give them a moment first.
        wake(.pendingLaunches, at: now + 2_000_000)
    }

    private mutating func stopping(_ received: [Int64: Int64]) {
        for (id, bytes) in received.sorted(by: { $0.key < $1.key }) {
            guard var m = tasks.machines[id] else { continue }
            _ = m.progressed(received: bytes, now: now)
            rememberMachine(id)
            tasks.machines[id] = nil
            out.append(.store(.update(m.record)))
        }
        tasks.attached.removeAll()
    }

    // MARK: - Turns

    /// The turn's store writes are durable.
    public mutating func committed() {
        if let done = turnStart?.completed, !done.isEmpty { world.mayHaveStaged?.subtract(done) }
        turnStart = nil
    }

    /// The store refused the turn's writes: memory goes back, as a whole, to its value before
    /// the turn, which is what the store says. Kept are only what the shell did meanwhile and
    /// cannot take back (`carryOver`): a transfer the turn stopped keeps running, one it started
    /// never starts, a task left without its transfer waits until the store commits again,
    /// then continues from its bytes. Events of the turn are forgotten (their numbers are never
    /// reused: they were reserved before).
    public mutating func commitFailed(now: Int64) -> [AgentEffect] {
        guard let start = turnStart else { return [] }
        var core = start.before[0]
        core.tasks.machines = tasks.machines
        for (id, before) in start.machinesBefore { core.tasks.machines[id] = before }
        core.sessions.carryOver(from: sessions, lastSeq: start.lastSeq)
        core.tasks.carryOver(detached: start.detached, finalized: start.finalized, touched: start.touched)
        core.wakes = wakes
        core.world = world
        core.settings = settings  // the user's settings are not the turn's to take back
        core.tasks.scheduler.maxTotal = tasks.scheduler.maxTotal
        core.tasks.scheduler.maxPerHost = tasks.scheduler.maxPerHost
        self = core
        self.now = now
        out = []
        if !tasks.storeBlocked.isEmpty { wake(.storeRecheck, at: now + settings.spaceRecheck) }
        out.append(.launcherChanged)
        let effects = out
        out = []
        return effects
    }

    /// Remembers a task's machine (and its session's last event) as changed by the open turn.
    mutating func touch(_ id: Int64, session: String) {
        guard turnStart != nil, turnStart!.touched.insert(id).inserted else { return }
        touchQueue(session)
    }

    /// Keeps a task's machine as it was before the open turn, before the turn first changes it
    /// (the turn's copy of the core leaves the machines out: a turn copies only those it changes).
    mutating func rememberMachine(_ id: Int64) {
        guard turnStart != nil, turnStart!.machinesBefore.index(forKey: id) == nil else { return }
        turnStart!.machinesBefore[id] = .some(tasks.machines[id])
    }

    mutating func touchQueue(_ session: String) {
        guard turnStart != nil, turnStart!.lastSeq[session] == nil else { return }
        turnStart!.lastSeq[session] = sessions.queues[session]?.lastSeq ?? 0
    }

    // MARK: - Queries (pure reads of memory, for the shell)

    /// What docks show: the badge, and the progress (0...1) of all running transfers.
    public var launcherState: (count: Int, progress: Double, transferring: Bool) {
        var received: Int64 = 0, expected: Int64 = 0
        for m in tasks.machines.values where m.record.state == .running {
            if let e = m.record.expected, e > 0 { received += m.record.received; expected += e }
        }
        return (user.badge, expected > 0 ? min(1, Double(received) / Double(expected)) : 0, !tasks.attached.isEmpty)
    }

    /// The live record of a running task (progress not yet checkpointed).
    public func liveRecord(_ id: Int64) -> TaskRecord? { tasks.machines[id]?.record }

    func isUploadCopy(_ r: TaskRecord) -> Bool { r.uploadFile?.hasPrefix(settings.state.uploads) ?? false }
}
