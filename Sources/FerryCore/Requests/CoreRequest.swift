/// A request of the API as the core takes it: a type that states its reply, what it reaches
/// (the sandbox decides by that alone), the paths it carries (the bus layer resolves them for a
/// sandboxed app), its session names (made an app's keys) and how it runs. None of these has a
/// default, so a new request that forgets one does not build; and its caller gets its `Reply`,
/// never an answer to unwrap at run time.
public protocol CoreRequest: Sendable {
    associatedtype Reply: Sendable
    /// What it reaches (see `RequestReach`).
    var reach: RequestReach { get }
    /// The request with each path it carries replaced by `resolve`'s answer (a sandboxed app's,
    /// resolved beneath what it may use, or refused).
    func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> Self
    /// The request with each session name replaced by `key` (an app's name made its key).
    func keyed(_ key: (String) throws -> String) throws -> Self
    /// The sandbox's rules of its own, beyond its reach (a session's namespace, resume data's
    /// signature): throws when `policy`'s app may not ask it.
    func admit(_ policy: SandboxPolicy) throws
    /// Runs it, as the host asked it or as `grant` lets an app.
    func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Reply, [AgentEffect])
    /// The reply as the app that asked reads it: its sessions under the names it gave them.
    static func named(_ reply: Reply, for app: String) -> Reply
}

/// What a path in a request is for: what its caller must be allowed there.
public enum PathUse: Sendable, Equatable {
    /// A file to upload: read.
    case read
    /// A folder to save into, named by the option that gave it: written.
    case writeFolder(option: String)
    /// A file to save (its folder is written), named by its option.
    case writeFile(option: String)
}

/// How a request runs: the host's as asked; a sandboxed app's as its `SandboxPolicy` allowed.
public struct Grant: Sendable {
    /// The app asking (nil: a host program).
    var app: SandboxedApp?
    /// The sessions a listing, a count or a session-wide action covers (nil: as asked).
    var sessions: [String]?

    static let host = Grant()

    /// The sessions `session` covers: as asked, or those the grant allows; nil: every session.
    func covered(_ session: String) -> [String]? { sessions ?? (session.isEmpty ? nil : [session]) }
}

/// A request's sessions made keys: `key` for a named session, an empty one ("all") kept.
func sessionKey(_ session: String, _ key: (String) throws -> String) rethrows -> String {
    session.isEmpty ? session : try key(session)
}

/// The request carries no path.
public protocol CarriesNoPath: CoreRequest {}
extension CarriesNoPath {
    public func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> Self { self }
}

/// The sandbox decides the request by its reach alone.
public protocol NoSandboxRuleOfItsOwn: CoreRequest {}
extension NoSandboxRuleOfItsOwn {
    public func admit(_ policy: SandboxPolicy) throws {}
}

/// The request names tasks, not sessions: their ids are the same for every caller.
public protocol NamesNoSession: CoreRequest {}
extension NamesNoSession {
    public func keyed(_ key: (String) throws -> String) throws -> Self { self }
}

/// The reply names no session.
public protocol ReplyNamesNoSession: CoreRequest {}
extension ReplyNamesNoSession {
    public static func named(_ reply: Reply, for app: String) -> Reply { reply }
}

extension TaskRecord {
    /// The record as `app` reads it: its session under the name it gave it.
    func named(for app: String) -> TaskRecord {
        var r = self
        r.session = SessionKey.name(of: r.session, app: app)
        return r
    }
}

/// A page of a listing: `limit` items, 1,000 when it says 0, never over 10,000 (one reply
/// stays a few MB). ListTasks, ListTaskRows, their sections and FetchEvents alike.
func pageSize(_ limit: Int) -> Int { limit == 0 ? 1000 : min(limit, 10_000) }
