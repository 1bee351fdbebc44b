/// What a request reaches: each `CoreRequest` states its own — the session or tasks it is
/// about, the tasks it makes, the page it reads, or that it is the user's alone.
/// `SandboxPolicy` grants an app's request by its reach (plus the rules a request keeps of its
/// own, `CoreRequest.admit`: a session's namespace, resume data's signature).
public enum RequestReach: Sendable, Equatable {
    /// Opens (or makes) the session named.
    case opening(String)
    /// Makes this many tasks in the session named (at most `AgentCore.maxBatch` a call).
    case making(String, count: Int)
    /// The session named.
    case session(String)
    /// The session named, or ("") every session the caller may see.
    case sessions(String)
    /// A page of the session named, or of every session the caller may see (at most `pageSize`).
    case page(String, limit: Int)
    /// These tasks.
    case tasks([Int64])
    /// The agent's own figures (an app's cover its own sessions).
    case agent
    /// The user's alone: an app is refused, for this reason.
    case userOnly(String)
}
