import FerryBus
import FerryCore
import Foundation

/// How far a transfer is, as an `async` call's `progress` closure sees it.
public struct FerryProgress: Sendable, Equatable {
    /// Bytes received (a download) or sent (an upload) so far.
    public var completed: Int64
    /// The whole size, when the server said it.
    public var total: Int64?
    /// 0 to 1, when the size is known.
    public var fraction: Double? { total.flatMap { $0 > 0 ? Double(completed) / Double($0) : nil } }

    /// Progress of `completed` bytes out of `total` (nil: unknown).
    public init(completed: Int64, total: Int64?) { self.completed = completed; self.total = total }
}

/// What a finished download was (the response half of URLSession's `download(from:)`).
public struct FerryDownloadResponse: Sendable, Equatable {
    /// The URL the task asked for.
    public var url: URL
    /// The name the agent gave the file (from Content-Disposition or the URL), after moving.
    public var suggestedFilename: String
    /// The file's length in bytes.
    public var expectedContentLength: Int64
}

/// The modern Swift shape: each call creates a task, starts it and returns when it ends.
/// Its events go to the call (progress to the closure), not to the delegate or ``FerrySession/events``.
/// Canceling the Swift task cancels the transfer. If the app exits while waiting, the transfer
/// goes on in the agent, and its events reach the delegate of the next run.
extension FerrySession {
    /// Downloads `url` and moves the file into `directory` (default: the configuration's
    /// ``FerrySessionConfiguration/defaultDestination``, else the user's download folder), never
    /// over an existing file. Returns the file's new place.
    public func download(
        from url: URL, into directory: URL? = nil, progress: (@Sendable (FerryProgress) -> Void)? = nil
    ) async throws -> (URL, FerryDownloadResponse) {
        try await download(for: FerryRequest(url: url), into: directory, progress: progress)
    }

    /// Downloads what `request` asks for; see ``download(from:into:progress:)``.
    public func download(
        for request: FerryRequest, description: String = "", into directory: URL? = nil,
        progress: (@Sendable (FerryProgress) -> Void)? = nil
    ) async throws -> (URL, FerryDownloadResponse) {
        let task = try await offThePool { try self.downloadTask(with: request, description: description) }
        return try downloaded(await wait(for: task, into: directory, progress: progress))
    }

    /// Continues a canceled or failed download from its resume data (a thrown
    /// ``FerryTaskError``'s `resumeData`); only the missing bytes are fetched.
    public func download(
        resumeFrom resumeData: Data, into directory: URL? = nil, progress: (@Sendable (FerryProgress) -> Void)? = nil
    ) async throws -> (URL, FerryDownloadResponse) {
        let task = try await offThePool { try self.downloadTask(withResumeData: resumeData) }
        return try downloaded(await wait(for: task, into: directory, progress: progress))
    }

    /// Uploads `file` as the body of `request` and returns what the server answered.
    public func upload(
        for request: FerryRequest, fromFile file: URL, description: String = "",
        progress: (@Sendable (FerryProgress) -> Void)? = nil
    ) async throws -> FerryUploadReply {
        let task = try await offThePool {
            try self.uploadTask(with: request, fromFile: file, description: description)
        }
        guard case .uploaded(let reply) = try await wait(for: task, into: nil, progress: progress) else {
            throw FerryError(.failed, "task \(task.taskIdentifier) ended without the server's reply")
        }
        return reply
    }

    /// The session's unfinished tasks, with current figures (URLSession's `allTasks`).
    public var tasks: [FerryTask] {
        get async throws { try await offThePool { try self.allTasks() } }
    }

    private func downloaded(_ outcome: AwaitedOutcome) throws -> (URL, FerryDownloadResponse) {
        guard case .downloaded(let file, let response) = outcome else {
            throw FerryError(.failed, "the download ended without a file")
        }
        return (file, response)
    }

    /// Starts the (suspended) task with its events routed to this wait.
    private func wait(
        for task: FerryTask, into directory: URL?, progress: (@Sendable (FerryProgress) -> Void)?
    ) async throws -> AwaitedOutcome {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                awaited.add(
                    task.taskIdentifier,
                    .init(destination: directory, progress: progress, continuation: continuation))
                do {
                    try task.start()
                } catch {
                    awaited.fail(task.taskIdentifier, error)
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// The agent's calls block on the bus: not on the concurrency pool's few threads.
    private func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            DispatchQueue.global().async { c.resume(with: Result { try body() }) }
        }
    }
}
