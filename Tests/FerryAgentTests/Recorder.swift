import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Records every callback, in order; tests wait on it for the event they expect.
final class Recorder: FerrySessionDelegate, @unchecked Sendable {
    enum Call: Equatable {
        case wrote(UInt64, total: Int64, expected: Int64?)
        case resumed(UInt64, offset: Int64)
        case finished(UInt64, file: String)
        case sent(UInt64, total: Int64, expected: Int64?)
        case completed(UInt64, error: String?, hasResumeData: Bool)
        case challenge(UInt64, realm: String, failures: Int)
        case invalid
        case finishedEvents
    }
    private let condition = NSCondition()
    private(set) var calls: [Call] = []
    private(set) var resumeData: [UInt64: Data] = [:]
    /// Where didFinishDownloadingTo moves files (nil: leave them).
    var moveInto: URL?
    var moved: [UInt64: URL] = [:]
    /// The host each challenge named, in order.
    private(set) var challengeHosts: [String] = []
    /// Answers to challenges, in order.
    var answers: [FerryChallengeDisposition] = []
    /// Leave the bus inside the next didFinishDownloadingTo (an app dying in the callback).
    var dieInFinish = false
    /// The thread-checking: every callback must run on the delegate queue.
    var queue: OperationQueue?
    private(set) var offQueue = 0

    private func add(_ c: Call) {
        if let queue, OperationQueue.current !== queue { offQueue += 1 }
        condition.lock(); calls.append(c); condition.broadcast(); condition.unlock()
    }

    /// Waits until `predicate` holds for the calls so far (bounded).
    @discardableResult
    func wait(_ what: String, timeout: Double = 30, _ predicate: ([Call]) -> Bool) throws -> [Call] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock(); defer { condition.unlock() }
        while !predicate(calls) {
            guard condition.wait(until: deadline) else { throw FerryError(.failed, "timed out waiting for \(what); got \(calls)") }
        }
        return calls
    }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?) {
        add(.wrote(downloadTask.taskIdentifier, total: totalBytesWritten, expected: totalBytesExpectedToWrite))
    }
    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64?) {
        add(.resumed(downloadTask.taskIdentifier, offset: fileOffset))
    }
    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didFinishDownloadingTo location: URL) {
        if dieInFinish {
            dieInFinish = false
            if let moveInto { moved[downloadTask.taskIdentifier] = try? FerryFiles.move(location, into: moveInto) }
            session.disconnect()
            add(.finished(downloadTask.taskIdentifier, file: location.path))
            return
        }
        if let moveInto { moved[downloadTask.taskIdentifier] = try? FerryFiles.move(location, into: moveInto) }
        add(.finished(downloadTask.taskIdentifier, file: location.path))
    }
    func urlSession(_ session: FerrySession, task: FerryTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
        add(.sent(task.taskIdentifier, total: totalBytesSent, expected: totalBytesExpectedToSend))
    }
    func urlSession(_ session: FerrySession, task: FerryTask, didCompleteWithError error: FerryTaskError?) {
        if let data = error?.resumeData { resumeData[task.taskIdentifier] = data }
        add(.completed(task.taskIdentifier, error: error?.name, hasResumeData: error?.resumeData != nil))
    }
    func urlSession(_ session: FerrySession, task: FerryTask, didReceive challenge: FerryAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (FerryChallengeDisposition) -> Void) {
        condition.lock(); challengeHosts.append(challenge.host); condition.unlock()
        add(.challenge(task.taskIdentifier, realm: challenge.realm, failures: challenge.previousFailureCount))
        completionHandler(answers.isEmpty ? .performDefaultHandling : answers.removeFirst())
    }
    func urlSession(_ session: FerrySession, didBecomeInvalidWithError error: Error?) { add(.invalid) }
    func urlSessionDidFinishEvents(forBackgroundURLSession session: FerrySession) { add(.finishedEvents) }
}

extension Array where Element == Recorder.Call {
    func completed(_ id: UInt64) -> Recorder.Call? {
        first { if case .completed(id, _, _) = $0 { return true } else { return false } }
    }
    func count(where match: (Recorder.Call) -> Bool) -> Int { filter(match).count }
}
