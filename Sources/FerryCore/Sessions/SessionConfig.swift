/// A background session's configuration (NSURLSessionConfiguration's background subset).
public struct SessionConfig: Codable, Sendable, Equatable {
    /// Queue events for a client (false for fire-and-forget sessions such as the CLI's).
    public var keepEvents: Bool = true
    /// The app's command line, started with FERRY_BACKGROUND_SESSION set when events wait and
    /// no client is connected. One element ending in ".desktop" names a desktop entry instead.
    public var launchCommand: [String] = []
    /// Start the app for waiting events at all (a host app also needs a launch command; a
    /// sandboxed app is started as itself).
    public var relaunch: Bool = true
    public var discretionary: Bool = false
    public var allowMetered: Bool = true
    public var perHostLimit: Int = 0
    /// Each of its tasks' speed limit unless the task sets its own, bytes per second (0: none).
    public var maxRate: Int64 = 0
    /// Its tasks share one cookie store (NSURLSessionConfiguration.httpShouldSetCookies), kept
    /// in the state folder across restarts and cleared when the session is invalidated.
    public var cookies: Bool = false
    public var requestTimeout: Int = 60
    /// Whole-transfer limit in seconds (iOS's default: 7 days).
    public var resourceTimeout: Int = 7 * 24 * 3600
    public var popups: Bool = true
    public var defaultDirectory: String? = nil
    /// finishTasksAndInvalidate / invalidateAndCancel was called: no new tasks.
    public var invalidating: Bool = false
    /// Invalidation finished (the "invalidated" event went out); OpenSession starts afresh.
    public var invalid: Bool = false
    /// The sandboxed app that opened the session (its Flatpak or Snap id); empty for the host.
    /// Only that app may use the session and see its tasks.
    public var app: String = ""
    /// That app's own folder on the host (`~/.var/app/ID`): its inbox and default destination.
    public var appHome: String = ""
    /// flatpak or snap (SandboxedApp.Kind); empty for the host.
    public var appKind: String = ""
    public init() {}

    // Stored as JSON: a key missing from an older agent's row takes its default.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SessionConfig()
        keepEvents = try c.decodeIfPresent(Bool.self, forKey: .keepEvents) ?? d.keepEvents
        launchCommand = try c.decodeIfPresent([String].self, forKey: .launchCommand) ?? d.launchCommand
        relaunch = try c.decodeIfPresent(Bool.self, forKey: .relaunch) ?? d.relaunch
        discretionary = try c.decodeIfPresent(Bool.self, forKey: .discretionary) ?? d.discretionary
        allowMetered = try c.decodeIfPresent(Bool.self, forKey: .allowMetered) ?? d.allowMetered
        perHostLimit = try c.decodeIfPresent(Int.self, forKey: .perHostLimit) ?? d.perHostLimit
        maxRate = try c.decodeIfPresent(Int64.self, forKey: .maxRate) ?? d.maxRate
        cookies = try c.decodeIfPresent(Bool.self, forKey: .cookies) ?? d.cookies
        requestTimeout = try c.decodeIfPresent(Int.self, forKey: .requestTimeout) ?? d.requestTimeout
        resourceTimeout = try c.decodeIfPresent(Int.self, forKey: .resourceTimeout) ?? d.resourceTimeout
        popups = try c.decodeIfPresent(Bool.self, forKey: .popups) ?? d.popups
        defaultDirectory = try c.decodeIfPresent(String.self, forKey: .defaultDirectory)
        invalidating = try c.decodeIfPresent(Bool.self, forKey: .invalidating) ?? d.invalidating
        invalid = try c.decodeIfPresent(Bool.self, forKey: .invalid) ?? d.invalid
        app = try c.decodeIfPresent(String.self, forKey: .app) ?? d.app
        appHome = try c.decodeIfPresent(String.self, forKey: .appHome) ?? d.appHome
        appKind = try c.decodeIfPresent(String.self, forKey: .appKind) ?? d.appKind
    }
}
