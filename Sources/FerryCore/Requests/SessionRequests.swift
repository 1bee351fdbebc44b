/// The requests about one session: open it, read it, its events, its end.

/// OpenSession's answer.
public struct SessionOpened: Sendable, Equatable {
    public var identifier: String
    public var created: Bool
    public var latestSeq: UInt64
    /// The folder its finished files wait in for the app.
    public var inbox: String
}

public struct OpenSession: CoreRequest, CarriesNoPath {
    public var identifier: String
    public var options: SessionOptions
    /// The bus peer opening it (it becomes a connected client).
    public var peer: String
    public init(_ identifier: String, _ options: SessionOptions, peer: String) {
        self.identifier = identifier; self.options = options; self.peer = peer
    }

    public var reach: RequestReach { .opening(identifier) }
    public func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> Self {
        var r = self
        if let dir = options.defaultDirectory {
            r.options.defaultDirectory = try resolve(dir, .writeFolder(option: "default-directory"))
        }
        return r
    }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        var r = self
        r.identifier = try key(identifier)
        return r
    }
    public func admit(_ policy: SandboxPolicy) throws { try policy.mayOpen(identifier, options) }
    public func run(
        _ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant
    ) throws -> (SessionOpened, [AgentEffect]) {
        let (reply, effects) = try core.sessions.open(
            identifier, options, peer: peer, app: grant.app, settings: core.settings, ctx.ledger)
        return (reply, core.armed(consume effects))
    }
    public static func named(_ reply: SessionOpened, for app: String) -> SessionOpened {
        var r = reply
        r.identifier = SessionKey.name(of: r.identifier, app: app)
        return r
    }
}

public struct GetSession: CoreRequest, CarriesNoPath, NoSandboxRuleOfItsOwn {
    public var session: String
    public init(_ session: String) { self.session = session }
    public var reach: RequestReach { .session(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self { GetSession(try key(session)) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (SessionInfo, [AgentEffect])
    {
        (try core.sessions.info(session, now: ctx.now, ctx.ledger), [])
    }
    public static func named(_ reply: SessionInfo, for app: String) -> SessionInfo {
        var r = reply
        r.identifier = SessionKey.name(of: r.identifier, app: app)
        return r
    }
}

public struct InvalidateSession: CoreRequest, CarriesNoPath, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var session: String
    public var cancelTasks: Bool
    public init(_ session: String, cancelTasks: Bool) { self.session = session; self.cancelTasks = cancelTasks }
    public var reach: RequestReach { .session(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        InvalidateSession(try key(session), cancelTasks: cancelTasks)
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        ((), try core.invalidateSession(session, cancelTasks: cancelTasks, ctx))
    }
}

public struct FinishedHandlingEvents: CoreRequest, CarriesNoPath, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var session: String
    public init(_ session: String) { self.session = session }
    public var reach: RequestReach { .session(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self { FinishedHandlingEvents(try key(session)) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        ((), core.armed(try core.sessions.finishedHandlingEvents(session, now: ctx.now, ctx.ledger)))
    }
}

/// A page of a session's events, with the resume data of the failed or canceled downloads
/// among them whose bytes are still kept.
public struct FetchedEvents: Sendable, Equatable {
    public var events: [QueuedEvent]
    public var resumeData: [Int64: ResumeData]
}

public struct FetchEvents: CoreRequest, CarriesNoPath, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var session: String
    public var after: UInt64
    public var limit: Int
    public init(session: String, after: UInt64, limit: Int) {
        self.session = session; self.after = after; self.limit = limit
    }
    public var reach: RequestReach { .session(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        FetchEvents(session: try key(session), after: after, limit: limit)
    }
    public func run(
        _ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant
    ) throws -> (FetchedEvents, [AgentEffect]) {
        (try core.sessions.fetchEvents(session, after: after, limit: limit, ctx.ledger), [])
    }
}

public struct AcknowledgeEvents: CoreRequest, CarriesNoPath, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var session: String
    public var upTo: UInt64
    public init(session: String, upTo: UInt64) { self.session = session; self.upTo = upTo }
    public var reach: RequestReach { .session(session) }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        AcknowledgeEvents(session: try key(session), upTo: upTo)
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        let confined = !core.sessions.config(session).app.isEmpty
        return ((), core.armed(try core.sessions.acknowledge(session, upTo: upTo, confined: confined)))
    }
}
