import Foundation

/// What a background session is (NSURLSessionConfiguration.background(withIdentifier:)).
/// The agent keeps it: reopening the identifier later reconnects to the same session.
public struct FerrySessionConfiguration: Sendable, Equatable {
    /// Chosen by the app, e.g. "com.example.Podcast.BackgroundSession".
    public var identifier: String
    /// The command the agent runs to relaunch the app when events wait for it and the app is
    /// not running (iOS: sessionSendsLaunchEvents). An argv, or one desktop entry id ending
    /// in ".desktop". Empty: never relaunch; events wait until the app comes back by itself.
    public var launchCommand: [String] = []
    /// Let the agent start the app when events wait for it (iOS: sessionSendsLaunchEvents). A
    /// host app also needs `launchCommand`; a sandboxed (Flatpak, Snap) app is started as
    /// itself, by D-Bus activation or `flatpak run`, and its `launchCommand` is not sent.
    public var sessionSendsLaunchEvents = true
    /// Hand files for upload to the agent as open descriptors (the agent keeps a copy until the
    /// upload ends) instead of by path. Needed inside a sandbox, where the agent accepts no
    /// host paths; the default there. Outside, a path is cheaper (no copy).
    public var uploadsByDescriptor = Sandbox.isSandboxed
    /// Wait for a cheap moment (iOS: isDiscretionary).
    public var isDiscretionary = false
    /// May transfer on metered networks (iOS: allowsExpensiveNetworkAccess).
    public var allowsMeteredNetworkAccess = true
    /// 0 = the agent's default.
    public var httpMaximumConnectionsPerHost = 0
    /// Keep and send cookies across this session's tasks (iOS: httpShouldSetCookies; here off
    /// by default, as a background session has no browser's cookie store to share).
    public var httpShouldSetCookies = false
    /// Each task's speed limit, bytes per second (0: none).
    public var maximumBytesPerSecond: Int64 = 0
    /// Idle limit of one request, seconds.
    public var timeoutIntervalForRequest: TimeInterval = 60
    /// Whole-transfer limit, seconds (iOS's default: 7 days).
    public var timeoutIntervalForResource: TimeInterval = 7 * 24 * 3600
    /// "Download complete!" popups and the badge for this session's downloads.
    public var showsNotifications = true
    /// Where a finished file goes when the app did not move it during didFinishDownloadingTo
    /// (nil: the user's download folder). Ferry never deletes a finished file.
    public var defaultDestination: URL? = nil
    /// The D-Bus address of the agent's bus; nil means the session bus. (Tests use private buses.)
    public var busAddress: String? = nil

    /// A background session named `identifier`, with the defaults below.
    public init(identifier: String) { self.identifier = identifier }

    /// A background session named `identifier` (URLSessionConfiguration.background(withIdentifier:)).
    public static func background(withIdentifier identifier: String) -> FerrySessionConfiguration {
        FerrySessionConfiguration(identifier: identifier)
    }
}
