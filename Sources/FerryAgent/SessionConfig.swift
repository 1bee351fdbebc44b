/// A background session's configuration (NSURLSessionConfiguration's background subset).
public struct SessionConfig: Codable, Sendable, Equatable {
    /// Queue events for a client (false for fire-and-forget sessions such as the CLI's).
    public var keepEvents: Bool = true
    public var launchCommand: [String] = []
    public var discretionary: Bool = false
    public var allowMetered: Bool = true
    public var perHostLimit: Int = 0
    public var requestTimeout: Int = 60
    /// Whole-transfer limit in seconds (iOS's default: 7 days).
    public var resourceTimeout: Int = 7 * 24 * 3600
    public var popups: Bool = true
    public var defaultDirectory: String? = nil
    public init() {}
}
