import FerryBus
import FerryCore
import Foundation

/// One transfer of a background session (URLSessionTask). Tasks are created suspended:
/// call `resume()` to start. The agent owns the transfer; this object is a view of it,
/// kept current by the session's events. Thread-safe.
public class FerryTask: @unchecked Sendable, CustomStringConvertible {
    /// URLSessionTask.State.
    public enum State: Sendable, Equatable { case running, suspended, canceling, completed }

    /// The agent's id: unique for the user, stable across app and agent restarts.
    public let taskIdentifier: UInt64
    /// The request the task was made with.
    public let originalRequest: FerryRequest
    weak var session: FerrySession?
    private let lock = NSLock()
    private var _state: State
    private var _description: String
    private var _received: Int64 = 0
    private var _expected: Int64?
    private var _sent: Int64 = 0
    private var _error: FerryTaskError?

    init(id: UInt64, request: FerryRequest, description: String, state: State, session: FerrySession) {
        taskIdentifier = id; originalRequest = request; _description = description; _state = state
        self.session = session
    }

    private func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

    /// Where the task is, as the latest event or call left it.
    public var state: State { locked { _state } }
    /// Free text for the app (URLSessionTask.taskDescription), kept by the agent.
    public var taskDescription: String { locked { _description } }
    /// Bytes of a download received so far.
    public var countOfBytesReceived: Int64 { locked { _received } }
    /// nil while the size is unknown (URLSessionTask uses -1).
    public var countOfBytesExpectedToReceive: Int64? { locked { self is FerryUploadTask ? nil : _expected } }
    /// Bytes of an upload's body sent so far.
    public var countOfBytesSent: Int64 { locked { _sent } }
    /// The upload body's size (0 for a download).
    public var countOfBytesExpectedToSend: Int64? { locked { self is FerryUploadTask ? _expected : 0 } }
    /// Why the task failed, once completed.
    public var error: FerryTaskError? { locked { _error } }

    /// The task's kind, id and URL, for logs.
    public var description: String { "\(type(of: self))(\(taskIdentifier), \(originalRequest.url.absoluteString))" }

    /// Starts or continues the task.
    public func resume() {
        guard let session, state == .suspended else { return }
        if (try? session.agent.resume(task: Int64(taskIdentifier))) != nil { setState(.running) }
    }

    /// Starts a suspended task, saying why the agent refused (for the `async` calls).
    func start() throws {
        guard let session, state == .suspended else { return }
        try session.agent.resume(task: Int64(taskIdentifier))
        setState(.running)
    }

    /// Pauses the task; the bytes so far are kept.
    public func suspend() {
        guard let session, state == .running else { return }
        if (try? session.agent.pause(task: Int64(taskIdentifier))) != nil { setState(.suspended) }
    }

    /// Cancels the task: didCompleteWithError follows with a Canceled error.
    public func cancel() {
        guard let session, state != .completed, state != .canceling else { return }
        setState(.canceling)
        if (try? session.agent.cancel(task: Int64(taskIdentifier))) == nil { refresh() }
    }

    /// After a refused request (the task ended meanwhile): the agent's state is the truth.
    func refresh() {
        guard let session,
            let info = try? session.agent.getTask(task: Int64(taskIdentifier))
        else { return }
        locked { _state = .running }  // lets update() map the agent's state, canceling included
        update(from: info)
    }

    // MARK: - Updates from the session

    func setState(_ s: State) { locked { _state = s } }

    func update(from info: TaskInfo) {
        locked {
            _description = info.description
            if info.kind == .upload { _sent = info.received } else { _received = info.received }
            _expected = info.expected
            switch info.state {
            case .paused: _state = .suspended
            case .completed, .failed, .canceled: _state = .completed
            default: if _state != .canceling { _state = .running }
            }
        }
    }

    func progressed(received: Int64, expected: Int64?) {
        locked {
            _received = received; if let expected { _expected = expected }
        }
    }
    func sent(_ sent: Int64, expected: Int64?) {
        locked {
            _sent = sent; if let expected { _expected = expected }
        }
    }
    func completed(_ error: FerryTaskError?) {
        locked {
            _state = .completed; _error = error
        }
    }
}

/// A download (URLSessionDownloadTask).
public final class FerryDownloadTask: FerryTask, @unchecked Sendable {
    /// Cancels the task and hands back resume data (nil when nothing can be resumed).
    /// The partial bytes stay with the agent until a task is made from the data.
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        guard let session else { completionHandler(nil); return }
        setState(.canceling)
        let reply = try? session.agent.cancelProducingResumeData(task: Int64(taskIdentifier))
        if reply == nil { refresh() }
        let data = reply.map { Data($0) }
        completionHandler(data)
    }

    /// Cancels the task and returns resume data (nil when nothing can be resumed).
    public func cancelByProducingResumeData() async -> Data? {
        await withCheckedContinuation { c in cancel(byProducingResumeData: { c.resume(returning: $0) }) }
    }

    /// Fetches the download from `url` from now on: a fresh signed link for one that expired
    /// (a failed task, whose error said HTTP 410 or 403) or is about to. The bytes received are
    /// kept when the new URL's server has the same file (the agent asks with If-Range and the
    /// old validator); else the download starts over, and the delegate hears
    /// `didResumeAtOffset` 0. A failed task runs again under the same identifier; a suspended
    /// one stays suspended.
    ///
    /// - Returns: whether the task's header fields were dropped: the agent never sends them to
    ///   another origin (an `Authorization` for the old host must not reach the new one).
    /// - Throws: a `FerryError`: `InvalidURL` or `UnsupportedScheme` for the URL, `InvalidState`
    ///   once the task completed or was canceled.
    @discardableResult
    public func setURL(_ url: URL) throws -> Bool {
        guard let session else { throw FerryError(.failed, "the task's session is gone") }
        let dropped = try session.agent.setURL(task: Int64(taskIdentifier), url: url.absoluteString)
        refresh()
        return dropped
    }
}

/// An upload of a file (URLSessionUploadTask).
public final class FerryUploadTask: FerryTask, @unchecked Sendable {
    private let replyLock = NSLock()
    private var _reply: FerryUploadReply?
    /// What the server answered (the upload completion handler's data and response), set before
    /// didCompleteWithError is called.
    public var reply: FerryUploadReply? { replyLock.lock(); defer { replyLock.unlock() }; return _reply }
    func replied(_ reply: FerryUploadReply) { replyLock.lock(); _reply = reply; replyLock.unlock() }
}

/// A server's answer to an upload: its HTTP status, body (at most 1 MiB; `isCut` when the
/// server sent more) and header fields (names in lower case, as HTTP/2 writes them; no
/// Set-Cookie).
public struct FerryUploadReply: Sendable, Equatable {
    /// The final HTTP status.
    public var statusCode: Int
    /// The body, at most 1 MiB.
    public var data: Data
    /// The server sent more than 1 MiB; `data` is its start.
    public var isCut: Bool
    /// Header fields, names in lower case; repeated ones joined with ", ".
    public var headers: [String: String] = [:]

    /// A header field by name, in any case.
    public func value(forHTTPHeaderField name: String) -> String? { headers[name.lowercased()] }
}
