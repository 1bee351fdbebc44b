/// What a session's client is told about its tasks (the delegate callbacks of SEMANTICS.md).
public enum SessionEvent: Sendable, Equatable, Codable {
    case progress(received: Int64, expected: Int64?, written: Int64)
    case resumed(offset: Int64, expected: Int64?)
    case finished(file: String, received: Int64)
    case completed(error: String?, errorName: String?, resumable: Bool)

    public var kind: String {
        switch self {
        case .progress: return "progress"
        case .resumed: return "resumed"
        case .finished: return "finished"
        case .completed: return "completed"
        }
    }
    /// Progress is superseded by newer progress and never stored; the others are durable.
    public var isDurable: Bool { if case .progress = self { return false } else { return true } }
}
