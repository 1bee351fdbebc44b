import FerryCore
import Foundation

/// How an app learns that the agent started it for a session's events (iOS's
/// application(_:handleEventsForBackgroundURLSession:completionHandler:)).
///
///     if let id = FerryBackgroundLaunch.sessionIdentifier {
///         let session = try FerrySession(configuration: .background(withIdentifier: id), delegate: me)
///         // … events arrive; in urlSessionDidFinishEvents: session.finishedHandlingEvents()
///     }
public enum FerryBackgroundLaunch: Sendable {
    /// The environment variable the agent sets.
    public static let environmentKey = FerryRelease.backgroundSessionVariable

    /// The session this process was launched for, or nil for an ordinary start.
    public static var sessionIdentifier: String? {
        ProcessInfo.processInfo.environment[environmentKey].flatMap { $0.isEmpty ? nil : $0 }
    }
}
