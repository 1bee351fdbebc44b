/// A server asked for credentials (didReceiveChallenge).
public struct FerryAuthenticationChallenge: Sendable, Equatable {
    /// "Basic", "Digest", …
    public var scheme: String
    public var realm: String
    public var host: String
    /// How many credentials were already refused for this task.
    public var previousFailureCount: Int
}

/// The app's answer to a challenge.
public enum FerryChallengeDisposition: Sendable, Equatable {
    /// Try again with this user and password. The agent keeps them in memory only.
    case useCredential(user: String, password: String)
    /// Let the task fail as the server answered (HTTP 401).
    case performDefaultHandling
    /// Cancel the task.
    case cancelAuthenticationChallenge
}
