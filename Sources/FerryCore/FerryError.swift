/// Errors a caller can get back, each with a stable D-Bus error name and a message
/// that names the problem.
public struct FerryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case invalidURL = "InvalidURL"
        case unsupportedScheme = "UnsupportedScheme"
        case noSuchTask = "NoSuchTask"
        case noSuchSession = "NoSuchSession"
        case invalidArgument = "InvalidArgument"
        case invalidDestination = "InvalidDestination"
        case invalidResumeData = "InvalidResumeData"
        case invalidState = "InvalidState"
        case failed = "Failed"
        /// The agent's store cannot record the request (its disk is full, read-only, failing):
        /// nothing was queued, the caller may try again later.
        case storeUnavailable = "StoreUnavailable"
        /// A sandboxed app asked for something outside its sandbox (another app's session, a
        /// host path, a command to run).
        case accessDenied = "AccessDenied"
        /// A request beyond one of the agent's limits (a batch, a quota, a copy's size): the
        /// message names the limit and the ferryd option that sets it.
        case limitExceeded = "LimitExceeded"
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }

    public static let domain = "dev.ferry.Error"
    public var dbusName: String { "\(Self.domain).\(kind.rawValue)" }
    public var description: String { message }

    /// Maps a D-Bus error name back to a kind (unknown names become `.failed`).
    public init(dbusName: String, message: String) {
        let suffix = dbusName.hasPrefix(Self.domain + ".") ? String(dbusName.dropFirst(Self.domain.count + 1)) : ""
        self.init(Kind(rawValue: suffix) ?? .failed, message)
    }
}
