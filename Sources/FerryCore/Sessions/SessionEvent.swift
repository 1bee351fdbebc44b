/// What a session's client is told about its tasks (the delegate callbacks of SEMANTICS.md).
public enum SessionEvent: Sendable, Equatable, Codable {
    case progress(received: Int64, expected: Int64?, written: Int64)
    /// Upload progress: body bytes sent so far (didSendBodyData).
    case sent(sent: Int64, expected: Int64?, written: Int64)
    case resumed(offset: Int64, expected: Int64?)
    case finished(file: String, received: Int64)
    /// An upload the server took (kind "finished" too): its reply's file in the inbox ("" when
    /// it could not be kept), the HTTP status, whether the reply was cut at the limit, and its
    /// header fields (nil in events stored before they were kept).
    case uploaded(sent: Int64, replyFile: String, status: Int, cut: Bool, headers: [String: String]?)
    case completed(error: String?, errorName: String?, resumable: Bool)
    /// The server asked for credentials; the task waits for AnswerChallenge.
    /// `proxy`: the proxy asked (407), not the server; the answer is the proxy's credential.
    case challenge(scheme: String, realm: String, host: String, previousFailures: Int, proxy: Bool = false)
    /// The session was invalidated: no task is left and no new one is accepted.
    case invalidated(error: String?)

    public var kind: String {
        switch self {
        case .progress: return "progress"
        case .sent: return "sent"
        case .resumed: return "resumed"
        case .finished, .uploaded: return "finished"
        case .completed: return "completed"
        case .challenge: return "challenge"
        case .invalidated: return "invalidated"
        }
    }
    /// Progress is superseded by newer progress and never stored; the others are durable.
    public var isDurable: Bool {
        switch self {
        case .progress, .sent: return false
        default: return true
        }
    }
    public var isProgress: Bool { !isDurable }
}
