@testable import FerryCore

/// The store as a dictionary, for driving the agent core without SQLite: it answers the core's
/// reads and applies its writes, as the agent's Store does inside a turn.
final class MemoryLedger: AgentLedger {
    var tasks: [Int64: TaskRecord] = [:]
    var sessions: [String: SessionConfig] = [:]
    var events: [String: [QueuedEvent]] = [:]
    var lastSeq: [String: UInt64] = [:]
    var finished: [String: Int64] = [:]
    var badge = 0
    var staged: [Int64: Int64] = [:]
    /// Rows read one by one (task(_:)): the tests count the reads a step costs.
    var taskReads = 0

    func task(_ id: Int64) throws -> TaskRecord? {
        taskReads += 1
        return tasks[id]
    }
    func session(_ identifier: String) throws -> SessionConfig? { sessions[identifier] }
    func tasks(sessions: [String]?, afterID: Int64, limit: Int) throws -> [TaskRecord] {
        Array(tasks.values.filter { $0.id > afterID && (sessions?.contains($0.session) ?? true) }.sorted { $0.id < $1.id }.prefix(limit))
    }
    func taskSection(sessions: [String]?, active: Bool, offset: Int, limit: Int) throws -> [TaskRecord] {
        let picked = tasks.values.filter { $0.state.isFinal != active && (sessions?.contains($0.session) ?? true) }
        return Array(picked.sorted { active ? $0.id < $1.id : $0.id > $1.id }.dropFirst(offset).prefix(limit))
    }
    func nextQueued(limit: Int, excludingHosts: Set<String>, excludingIDs: Set<Int64>,
                    take: (TaskRecord) -> QueuePick) throws -> [TaskRecord] {
        var out: [TaskRecord] = [], skip = excludingHosts, skipSessions: Set<String> = []
        for r in tasks.values.sorted(by: { ($1.priority, $0.id) < ($0.priority, $1.id) }) where r.state == .queued && !excludingIDs.contains(r.id) && !skip.contains(r.host) && !skipSessions.contains(r.session) {
            switch take(r) {
            case .take: out.append(r)
            case .skipTask: continue
            case .skipHost: skip.insert(r.host)
            case .skipSession: skipSessions.insert(r.session)
            }
            if out.count == limit { break }
        }
        return out
    }
    func waitingForNetwork() throws -> [TaskRecord] { tasks.values.filter { $0.state == .waiting && $0.reason == .network }.sorted { $0.id < $1.id } }
    func waiting(for reason: WaitReason) throws -> [TaskRecord] {
        tasks.values.filter { $0.state == .waiting && $0.reason == reason }.sorted { $0.id < $1.id }
    }
    func earliestRetry(after: Int64) throws -> Int64? {
        tasks.values.filter { $0.state == .waiting }.compactMap(\.retryAt).filter { $0 > after }.min()
    }
    func dueRetries(now: Int64, limit: Int) throws -> [TaskRecord] {
        Array(tasks.values.filter { $0.state == .waiting && ($0.retryAt ?? .max) <= now }.prefix(limit))
    }
    func endedTaskIDs(session: String?, updatedBefore: Int64) throws -> [Int64] {
        tasks.values.filter { $0.state.isFinal && $0.updated < updatedBefore && (session == nil || $0.session == session) }.map(\.id).sorted()
    }
    func unfinishedTaskIDs(session: String) throws -> [Int64] {
        tasks.values.filter { !$0.state.isFinal && $0.session == session }.map(\.id).sorted()
    }
    func taskIDs(session: String?, states: Set<TaskState>) throws -> [Int64] {
        tasks.values.filter { states.contains($0.state) && (session == nil || $0.session == session) }.map(\.id).sorted()
    }
    func countsByState(sessions: [String]?) throws -> [String: Int] {
        Dictionary(grouping: tasks.values.filter { sessions?.contains($0.session) ?? true }, by: \.state.rawValue).mapValues(\.count)
    }
    func finishedEvents(session: String) throws -> Int64 { finished[session] ?? 0 }
    func stagedBytes(_ id: Int64) -> Int64 { staged[id] ?? 0 }
    func heldInStaging(sessions: [String], excluding running: Set<Int64>) throws -> Int64 {
        tasks.values.filter { sessions.contains($0.session) && $0.kind == .download && [.queued, .waiting, .paused].contains($0.state) && !running.contains($0.id) }
            .reduce(0) { $0 + $1.received }
    }

    func apply(_ w: StoreWrite, now: Int64) {
        switch w {
        case .insert(let records): for r in records { tasks[r.id] = r }
        case .update(let r): tasks[r.id] = r
        case .progress(let r):   // as the store does: the keys stay as stored
            if let old = tasks[r.id] { var n = r; n.session = old.session; n.host = old.host; n.state = old.state; tasks[r.id] = n }
        case .deleteTasks(let ids): for id in ids { tasks[id] = nil }
        case .appendEvent(let s, let e): events[s, default: []].append(e); lastSeq[s] = max(lastSeq[s] ?? 0, e.seq)
        case .reserveSeq(let s, let seq): lastSeq[s] = max(lastSeq[s] ?? 0, seq)
        case .deleteEvents(let s, let seq): events[s]?.removeAll { $0.seq <= seq }
        case .saveSession(let id, let c): sessions[id] = c
        case .finishedEvents(let s, let at): finished[s] = at
        case .badge(let n): badge = n
        }
    }

    /// What a restarted agent loads.
    func startState(network: NetworkState = NetworkState()) -> AgentStartState {
        var queues: [String: EventQueue] = [:]
        for id in sessions.keys { queues[id] = EventQueue(lastSeq: lastSeq[id] ?? 0, restored: events[id] ?? []) }
        for (id, r) in tasks where r.state == .running { tasks[id]?.state = .queued }   // requeueInterrupted
        return AgentStartState(queues: queues, sessions: sessions, badge: badge,
                               lastTaskID: tasks.keys.max() ?? 0, network: network, staged: Set(staged.keys))
    }
}

/// An agent core with its store: every input is one committed turn unless said otherwise.
struct CoreDriver {
    var core: AgentCore
    let ledger: MemoryLedger
    var now: Int64 = 1_000_000_000

    init(_ settings: AgentCore.Settings = AgentCore.Settings(stateDirectory: "/state"), ledger: MemoryLedger = MemoryLedger()) {
        var s = settings
        s.backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)
        core = AgentCore(settings: s)
        self.ledger = ledger
    }

    /// A started core with session "s" open, at most `maxTotal` transfers at once and
    /// `maxPerHost` to a host.
    static func started(maxTotal: Int, maxPerHost: Int) throws -> CoreDriver {
        var settings = AgentCore.Settings(stateDirectory: "/state")
        settings.maxTotal = maxTotal
        settings.maxPerHost = maxPerHost
        var d = CoreDriver(settings)
        try d.start()
        try d.openSession()
        return d
    }

    /// Handles an input, applies its store writes and commits (what the commit logs comes last).
    @discardableResult
    mutating func run(_ input: AgentInput, commit: Bool = true) throws -> [AgentEffect] {
        now += 1_000
        var effects = core.handle(input, now: now, ledger: ledger)
        for case .store(let w) in effects { ledger.apply(w, now: now) }
        if commit { effects += core.committed() }
        return effects
    }

    /// A request in one turn (`app`: a sandboxed app's), committed unless said otherwise.
    mutating func answer<R: CoreRequest>(_ r: R, from app: SandboxedApp? = nil, commit: Bool = true) throws -> (reply: R.Reply, effects: [AgentEffect]) {
        now += 1_000
        var (reply, effects) = try core.answer(r, from: app, now: now, ledger: ledger)
        for case .store(let w) in effects { ledger.apply(w, now: now) }
        if commit { effects += core.committed() }
        return (reply, effects)
    }

    @discardableResult
    mutating func request<R: CoreRequest>(_ r: R, from app: SandboxedApp? = nil) throws -> R.Reply { try answer(r, from: app).reply }

    mutating func effects<R: CoreRequest>(of r: R, from app: SandboxedApp? = nil, commit: Bool = true) throws -> [AgentEffect] {
        try answer(r, from: app, commit: commit).effects
    }

    mutating func start(network: NetworkState = NetworkState()) throws -> [AgentEffect] {
        try run(.started(ledger.startState(network: network)))
    }

    mutating func openSession(_ id: String = "s", _ options: SessionOptions = SessionOptions(), peer: String = ":1.1") throws {
        _ = try request(.openSession(id, options, peer: peer))
    }

    mutating func download(_ url: String, session: String = "s", host: String? = nil) throws -> Int64 {
        let r = TaskRecord(session: "", url: url, host: host ?? String(url.split(separator: "/")[1]))
        return try request(.createTasks(session: session, [r]))[0]
    }

    /// A task as callers see it (memory's while it runs: the store keeps it queued).
    func shown(_ id: Int64) -> TaskRecord? { try? core.tasks.shownTask(id, ledger) }

    /// Runs the wakes the effects asked for that are due by now (idle ones at once).
    @discardableResult
    mutating func wake(_ wake: AgentWake) throws -> [AgentEffect] { try run(.wake(wake)) }
}

extension Array where Element == AgentEffect {
    var started: [Int64] { compactMap { if case .startTransfer(let r, _, _, _) = $0 { return r.id } else { return nil } } }
    var stopped: [Int64] { compactMap { if case .stopTransfer(let id) = $0 { return id } else { return nil } } }
    var writes: [StoreWrite] { compactMap { if case .store(let w) = $0 { return w } else { return nil } } }
    var wakes: [AgentWake] { compactMap { if case .wake(let w, _) = $0 { return w } else { return nil } } }
    var popups: [PopupPlan.Outcome] { compactMap { if case .popup(let p) = $0 { return p } else { return nil } } }
    var launches: [String] { compactMap { if case .launch(let s, _) = $0 { return s } else { return nil } } }
    var launchTargets: [LaunchTarget] { compactMap { if case .launch(_, let t) = $0 { return t } else { return nil } } }
    var appended: [SessionEvent] { writes.compactMap { if case .appendEvent(_, let e) = $0 { return e.event } else { return nil } } }
}
