/// An API call, decoded and checked for form by the bus layer (types, option names, paths that
/// must exist); the core checks what it means.
public enum AgentRequest: Sendable {
    case openSession(String, SessionOptions, peer: String)
    /// New tasks (records without ids), all or none.
    case createTasks(session: String, [TaskRecord])
    /// A task from resume data; `destinationGiven`: the caller chose where it goes.
    case createFromResumeData(session: String, ResumeData, TaskRecord, destinationGiven: Bool)
    case listTasks(session: String, after: Int64, limit: Int)
    /// One section of the Downloads window: active tasks oldest first, or ended ones newest first.
    case listSection(session: String, active: Bool, offset: Int, limit: Int)
    case getTask(Int64)
    case pause(Int64)
    case resume(Int64)
    case cancel(Int64)
    case cancelProducingResumeData(Int64)
    case answerChallenge(Int64, ChallengeReply)
    case finishedHandlingEvents(String)
    case invalidateSession(String, cancelTasks: Bool)
    case getSession(String)
    case fetchEvents(session: String, after: UInt64, limit: Int)
    case acknowledgeEvents(session: String, upTo: UInt64)
    case resetBadge
    case removeTasks([Int64])
    case clearFinished(session: String)
    /// Every active task of a session (empty: all) paused; every paused one resumed.
    case pauseAll(session: String)
    case resumeAll(session: String)
    case status
    /// A request from a sandboxed app: only its own sessions and tasks (see AgentCore+Access).
    indirect case sandboxed(SandboxedApp, AgentRequest)
}

/// An app's answer to an authentication challenge.
public enum ChallengeReply: Sendable, Equatable {
    case credential(Credential, persistence: CredentialPersistence = .none)
    case reject
    case cancel
}

/// The options OpenSession may change; nil leaves the stored value.
public struct SessionOptions: Sendable, Equatable {
    public var launchCommand: [String]?
    public var relaunch: Bool?
    public var discretionary: Bool?
    public var allowMetered: Bool?
    public var perHostLimit: Int?
    public var maxRate: Int64?
    public var cookies: Bool?
    public var requestTimeout: Int?
    public var resourceTimeout: Int?
    public var popups: Bool?
    public var keepEvents: Bool?
    public var defaultDirectory: String?
    public init() {}

    /// The stored configuration with these options applied.
    public func applied(to base: SessionConfig) -> SessionConfig {
        var c = base
        if let v = launchCommand { c.launchCommand = v }
        if let v = relaunch { c.relaunch = v }
        if let v = discretionary { c.discretionary = v }
        if let v = allowMetered { c.allowMetered = v }
        if let v = perHostLimit { c.perHostLimit = v }
        if let v = maxRate { c.maxRate = v }
        if let v = cookies { c.cookies = v }
        if let v = requestTimeout { c.requestTimeout = v }
        if let v = resourceTimeout { c.resourceTimeout = v }
        if let v = popups { c.popups = v }
        if let v = keepEvents { c.keepEvents = v }
        if let v = defaultDirectory { c.defaultDirectory = v }
        return c
    }

    /// Every option of a configuration (what GetSession shows, what the library sends).
    public init(_ c: SessionConfig) {
        launchCommand = c.launchCommand; relaunch = c.relaunch; discretionary = c.discretionary;
        allowMetered = c.allowMetered
        perHostLimit = c.perHostLimit; maxRate = c.maxRate; cookies = c.cookies; requestTimeout = c.requestTimeout;
        resourceTimeout = c.resourceTimeout
        popups = c.popups; keepEvents = c.keepEvents; defaultDirectory = c.defaultDirectory
    }
}

extension AgentRequest {
    /// The page a listing asks for: `limit` items, 1,000 when it says 0, never over 10,000 (one
    /// reply stays a few MB). ListTasks, ListTaskRows, their sections and FetchEvents alike.
    static func pageSize(_ limit: Int) -> Int { limit == 0 ? 1000 : min(limit, 10_000) }
}
