import FerryCore
import Foundation

/// Why a task ended without success (didCompleteWithError).
public struct FerryTaskError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable name: Canceled, NotFound, AuthenticationRequired, TimedOut, TLSError, …
    public var name: String
    /// What happened, for people.
    public var message: String
    /// Present when the task can continue from where it stopped: pass it to
    /// `downloadTask(withResumeData:)`.
    public var resumeData: Data?

    /// The task was canceled (by the app, the user or the session).
    public var isCancellation: Bool { name == "Canceled" }
    /// Name and message.
    public var description: String { "\(name): \(message)" }
}

/// An error of the library or the agent (bad URL, unknown session, invalid resume data, …).
public typealias FerryAPIError = FerryError
