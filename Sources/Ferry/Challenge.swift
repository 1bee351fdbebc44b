/// A server asked for credentials (didReceiveChallenge).
public struct FerryAuthenticationChallenge: Sendable, Equatable {
    /// "Basic", "Digest", …
    public var scheme: String
    /// The protection space the server named.
    public var realm: String
    /// The server (or proxy) that asked.
    public var host: String
    /// How many credentials were already refused for this task.
    public var previousFailureCount: Int
    /// The proxy asked (HTTP 407; URLProtectionSpace.isProxy()): `host` is the proxy's, and the
    /// answer is used for the proxy only.
    public var isProxy = false
}

/// The app's answer to a challenge.
public enum FerryChallengeDisposition: Sendable, Equatable {
    /// Try again with this user and password, for this task only. The agent keeps them in memory.
    case useCredential(user: String, password: String)
    /// Try again with this credential, and keep it as long as it says (URLCredential's persistence).
    case use(FerryCredential)
    /// Let the task fail as the server answered (HTTP 401).
    case performDefaultHandling
    /// Cancel the task.
    case cancelAuthenticationChallenge
}

/// A user name and password, and how long the agent keeps them (URLCredential).
public struct FerryCredential: Sendable, Equatable {
    /// How long the agent keeps a credential.
    public enum Persistence: Sendable, Equatable {
        /// This task only.
        case none
        /// Also this session's later tasks for the same server and realm, until the session is
        /// invalidated or the agent exits.
        case forSession
        /// In the user's keyring (the Secret Service): this app's tasks for the same server and
        /// realm, across restarts, without asking again.
        case permanent
    }
    /// The user name.
    public var user: String
    /// The password; the agent never logs it.
    public var password: String
    /// How long the agent keeps it.
    public var persistence: Persistence
    /// A credential kept as long as `persistence` says.
    public init(user: String, password: String, persistence: Persistence) {
        self.user = user; self.password = password; self.persistence = persistence
    }
}
