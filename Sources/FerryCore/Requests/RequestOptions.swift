// What requests carry besides names and ids: an app's answer to a challenge, the options
// OpenSession may change.

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
