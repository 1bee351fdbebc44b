/// The requests over many tasks: pages of them, counts, session-wide actions, the agent's own.

public struct ListTasks: CoreRequest, CarriesNoPath, NoSandboxRuleOfItsOwn {
    /// One session, or "" for every session the caller may see.
    public var session: String
    public var after: Int64
    public var limit: Int
    public init(session: String, after: Int64, limit: Int) {
        self.session = session; self.after = after; self.limit = limit
    }
    public var reach: RequestReach { .page(session, limit: limit) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        ListTasks(session: try sessionKey(session, key), after: after, limit: limit)
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> ([TaskRecord], [AgentEffect])
    {
        let page = try ctx.ledger.tasks(sessions: grant.covered(session), afterID: after, limit: pageSize(limit))
        return (page.map(core.tasks.shown), [])
    }
    public static func named(_ reply: [TaskRecord], for app: String) -> [TaskRecord] {
        reply.map { $0.named(for: app) }
    }
}

/// One section of the Downloads window: active tasks oldest first, or ended ones newest first.
public struct ListSection: CoreRequest, CarriesNoPath, NoSandboxRuleOfItsOwn {
    public var session: String
    public var active: Bool
    public var offset: Int
    public var limit: Int
    public init(session: String, active: Bool, offset: Int, limit: Int) {
        self.session = session; self.active = active; self.offset = offset; self.limit = limit
    }
    public var reach: RequestReach { .page(session, limit: limit) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        ListSection(session: try sessionKey(session, key), active: active, offset: offset, limit: limit)
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> ([TaskRecord], [AgentEffect])
    {
        let page = try ctx.ledger.taskSection(
            sessions: grant.covered(session), active: active, offset: offset, limit: pageSize(limit))
        return (page.map(core.tasks.shown), [])
    }
    public static func named(_ reply: [TaskRecord], for app: String) -> [TaskRecord] {
        reply.map { $0.named(for: app) }
    }
}

/// ClearFinished, PauseAll and ResumeAll: every task of a session (or of every session the
/// caller may see) in the states the action takes; the reply is how many it took.
public struct SessionWide: CoreRequest, CarriesNoPath, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public enum Action: Sendable { case clearFinished, pauseAll, resumeAll }
    public var action: Action
    public var session: String
    public init(_ action: Action, session: String) { self.action = action; self.session = session }
    public var reach: RequestReach { .sessions(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        SessionWide(action, session: try sessionKey(session, key))
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Int, [AgentEffect]) {
        guard let sessions = grant.covered(session) else { return try run(&core, ctx, in: nil) }
        var total = 0, effects: [AgentEffect] = []
        for s in sessions {
            let (n, more) = try run(&core, ctx, in: s)
            total += n
            effects += more
        }
        return (total, effects)
    }

    /// In one session (nil: all of them).
    private func run(_ core: inout AgentCore, _ ctx: TaskContext, in session: String?) throws -> (Int, [AgentEffect]) {
        switch action {
        case .clearFinished:
            let ids = try ctx.ledger.endedTaskIDs(session: session, updatedBefore: .max)
            return (ids.count, core.absorb(try core.tasks.remove(ids, ctx), ctx))
        case .pauseAll:
            let ids = try ctx.ledger.taskIDs(session: session, states: [.queued, .running, .waiting])
            let finalizing = core.tasks.finalizing
            let (steps, n) = core.tasks.stepEach(ids.filter { !finalizing.contains($0) }, ctx, counting: .paused) {
                m, now in try m.pause(now: now)
            }
            return (n, core.absorb(steps, ctx))
        case .resumeAll:
            let ids = try ctx.ledger.taskIDs(session: session, states: [.paused])
            var (steps, n) = core.tasks.stepEach(ids, ctx, counting: .queued) { m, now in try m.resume(now: now) }
            steps.effects.append(.wake(.schedule, at: nil))
            return (n, core.absorb(steps, ctx))
        }
    }
}

/// GetStatus's figures: tasks by state, transfers running, the badge.
public struct AgentCounts: Sendable, Equatable {
    public var counts: [String: Int]
    public var running: Int
    public var badge: Int
}

public struct GetStatus: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public init() {}
    public var reach: RequestReach { .agent }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (AgentCounts, [AgentEffect])
    {
        let counts = core.tasks.shownCounts(try ctx.ledger.countsByState(sessions: grant.sessions), grant.sessions)
        // An app's figures cover its own tasks; the badge is the user's.
        guard grant.app == nil else {
            return (AgentCounts(counts: counts, running: counts[TaskState.running.rawValue] ?? 0, badge: 0), [])
        }
        return (AgentCounts(counts: counts, running: core.tasks.attached.count, badge: core.user.badge), [])
    }
}

public struct ResetBadge: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public init() {}
    public var reach: RequestReach { .userOnly("the user.badge is the user's: a sandboxed app cannot reset it") }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        ((), core.armed(core.user.resetBadge(now: ctx.now)))
    }
}
