import FerryBus
import FerryCore
import Foundation
import Synchronization

/// What an `async` call on the session waits for: the task's file, or its server's reply.
enum AwaitedOutcome: Sendable {
    case downloaded(URL, FerryDownloadResponse)
    case uploaded(FerryUploadReply)
}

/// The tasks an `async` call waits on. Their events go to the call, not to the delegate or
/// `events`: progress to its closure, the file moved where it asked before the event is
/// acknowledged, the completion to its continuation.
final class AwaitedTasks: Sendable {
    struct Waiter: Sendable {
        /// Where a download's file goes (nil for an upload).
        var destination: URL?
        var progress: (@Sendable (FerryProgress) -> Void)?
        var continuation: CheckedContinuation<AwaitedOutcome, Error>
        /// Set when the file was moved; a failed move is kept to be thrown at the completion.
        var moved: Result<URL, Error>?
        var reply: FerryUploadReply?
    }
    private let table = Mutex<[UInt64: Waiter]>([:])

    func add(_ task: UInt64, _ waiter: Waiter) { table.withLock { $0[task] = waiter } }
    func contains(_ task: UInt64) -> Bool { table.withLock { $0[task] != nil } }
    private func waiter(_ task: UInt64) -> Waiter? { table.withLock { $0[task] } }
    private func update(_ task: UInt64, _ body: (inout Waiter) -> Void) {
        table.withLock { if var w = $0[task] { body(&w); $0[task] = w } }
    }
    private func remove(_ task: UInt64) -> Waiter? { table.withLock { $0.removeValue(forKey: task) } }

    /// Ends one wait before its task started.
    func fail(_ task: UInt64, _ error: Error) { remove(task)?.continuation.resume(throwing: error) }

    /// Ends every wait: the session stops delivering. The tasks go on in the agent.
    func failAll(_ error: Error) {
        let all = table.withLock { t in
            defer { t.removeAll() }; return Array(t.values)
        }
        for w in all { w.continuation.resume(throwing: error) }
    }

    /// Takes the event if an `async` call waits on its task; false leaves it to the delegate.
    /// A challenge is never taken: it goes to the delegate (or is refused: `answersChallenges`).
    func take(_ event: SessionEvent, of task: FerryTask, resumeData: [UInt8]?, fallback: URL) -> Bool {
        let id = task.taskIdentifier
        guard let w = waiter(id) else { return false }
        switch event {
        case .progress(let received, let expected, _):
            task.progressed(received: received, expected: expected)
            w.progress?(FerryProgress(completed: received, total: expected))
        case .sent(let sent, let expected, _):
            task.sent(sent, expected: expected)
            w.progress?(FerryProgress(completed: sent, total: expected))
        case .challenge: return false
        case .resumed, .invalidated: break
        case .finished(let file, let received):
            task.progressed(received: received, expected: nil)
            guard FileManager.default.fileExists(atPath: file) else { return true }
            let moved = Result { try FerryFiles.move(URL(fileURLWithPath: file), into: w.destination ?? fallback) }
            update(id) { $0.moved = moved }
        case .uploaded(let sent, let file, let status, let cut, let headers):
            task.sent(sent, expected: nil)
            let data = file.isEmpty ? Data() : (FileManager.default.contents(atPath: file) ?? Data())
            let reply = FerryUploadReply(statusCode: status, data: data, isCut: cut, headers: headers ?? [:])
            (task as? FerryUploadTask)?.replied(reply)
            update(id) { $0.reply = reply }
        case .completed(let message, let name, let resumable):
            guard let w = remove(id) else { return true }
            let error = message.map {
                FerryTaskError(
                    name: name ?? "Failed", message: $0, resumeData: resumable ? resumeData.map { Data($0) } : nil)
            }
            task.completed(error)
            w.continuation.resume(with: Self.outcome(of: task, w, error: error))
        }
        return true
    }

    private static func outcome(
        of task: FerryTask, _ w: Waiter, error: FerryTaskError?
    ) -> Result<
        AwaitedOutcome, Error
    > {
        if let error { return .failure(error) }
        if task is FerryUploadTask {
            return .success(.uploaded(w.reply ?? FerryUploadReply(statusCode: 0, data: Data(), isCut: false)))
        }
        switch w.moved {
        case .success(let file):
            let response = FerryDownloadResponse(
                url: task.originalRequest.url, suggestedFilename: file.lastPathComponent,
                expectedContentLength: task.countOfBytesReceived)
            return .success(.downloaded(file, response))
        case .failure(let error): return .failure(error)
        case nil:
            return .failure(
                FerryError(.invalidState, "task \(task.taskIdentifier)'s file was handed over before this wait began"))
        }
    }
}
