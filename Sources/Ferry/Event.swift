import Foundation

/// The delegate callbacks as values, for `for try await event in session.events`.
/// An event counts as handled when the loop asks for the next one: move a finished file
/// before that (it then goes to the default destination).
public enum FerryEvent: Sendable {
    case didWriteData(
        FerryDownloadTask, bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?)
    case didResumeAtOffset(FerryDownloadTask, fileOffset: Int64, expectedTotalBytes: Int64?)
    case didFinishDownloading(FerryDownloadTask, location: URL)
    case didSendBodyData(FerryTask, bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    case didComplete(FerryTask, error: FerryTaskError?)
    /// Answer with `respond` (once); the task waits until then.
    case didReceiveChallenge(
        FerryTask, FerryAuthenticationChallenge, respond: @Sendable (FerryChallengeDisposition) -> Void)
    case didBecomeInvalid(error: FerryTaskError?)
    case didFinishEventsForBackgroundSession
}

/// The session's events as an AsyncSequence. One consumer per session.
public struct FerryEvents: AsyncSequence, Sendable {
    public typealias Element = FerryEvent
    let mailbox: EventMailbox

    /// Hands out the events one at a time; asking for the next acknowledges the previous one.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let mailbox: EventMailbox
        /// The next event, or nil once the session is disconnected.
        public mutating func next() async -> FerryEvent? { await mailbox.take() }
    }
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(mailbox: mailbox) }
}

/// Hands one event at a time from the session's pump to an async consumer. The previous
/// event's `done` runs when the consumer asks for the next one (that is its acknowledgement).
final class EventMailbox: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: (FerryEvent, @Sendable () -> Void)?
    private var previousDone: (@Sendable () -> Void)?
    private var waiter: CheckedContinuation<FerryEvent?, Never>?
    private var closed = false

    /// Called by the pump; `done` is called once the consumer is finished with the event.
    func put(_ event: FerryEvent, done: @escaping @Sendable () -> Void) {
        lock.lock()
        if let w = waiter {
            waiter = nil
            previousDone = done
            lock.unlock()
            w.resume(returning: event)
        } else {
            pending = (event, done)
            lock.unlock()
        }
    }

    func close() {
        lock.lock()
        closed = true
        let w = waiter
        waiter = nil
        lock.unlock()
        w?.resume(returning: nil)
    }

    private func takePreviousDone() -> (@Sendable () -> Void)? {
        lock.withLock {
            let done = previousDone
            previousDone = nil
            return done
        }
    }

    func take() async -> FerryEvent? {
        takePreviousDone()?()
        return await withCheckedContinuation { (c: CheckedContinuation<FerryEvent?, Never>) in
            lock.lock()
            if let (event, d) = pending {
                pending = nil
                previousDone = d
                lock.unlock()
                c.resume(returning: event)
            } else if closed {
                lock.unlock()
                c.resume(returning: nil)
            } else {
                waiter = c
                lock.unlock()
            }
        }
    }
}
