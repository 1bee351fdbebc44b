import FerryBus
import FerryCore
import Foundation

/// How a session's events reach the app: fetched from the agent in order, handed to the
/// delegate (or the async sequence) one at a time, acknowledged only when the app is done
/// with each. Runs on the session's `pump` queue.
extension FerrySession {
    /// Events are waiting (a signal, or the start): fetch and deliver until the queue is empty.
    func kick() {
        pump.async { [self] in
            guard !pumping, !stopped else { return }
            pumping = true
            fetch()
        }
    }

    private struct Incoming {
        var seq: UInt64, task: UInt64, event: SessionEvent, resumeData: [UInt8]?
    }

    private func fetch() {
        guard !stopped else { pumping = false; return }
        let after = DeliveryLedger.shared.delivered(configuration.identifier)
        let batch: [Incoming]
        do {
            batch = try agent.fetchEvents(session: configuration.identifier, afterSeq: after, limit: 200).map {
                Incoming(
                    seq: $0.queued.seq, task: UInt64($0.queued.task), event: $0.queued.event, resumeData: $0.resumeData)
            }
        } catch {
            pumping = false  // the agent is gone; its next EventsAvailable starts us again
            return
        }
        guard !batch.isEmpty else {
            if durableSinceDrain {
                durableSinceDrain = false
                present(.didFinishEventsForBackgroundSession) { [self] in pump.async { self.fetch() } }
            } else {
                pumping = false
            }
            return
        }
        deliver(batch, 0)
    }

    private func deliver(_ batch: [Incoming], _ i: Int) {
        guard !stopped else { pumping = false; return }
        guard i < batch.count else { fetch(); return }
        let e = batch[i]
        // Exactly once: a sequence number already handled in this process is never shown again.
        guard e.seq > DeliveryLedger.shared.delivered(configuration.identifier) else { deliver(batch, i + 1); return }
        // An event an `async` call took is not the delegate's: no drain callback for it alone.
        let taken =
            awaited.contains(e.task)
            && task(e.task).map {
                awaited.take(e.event, of: $0, resumeData: e.resumeData, fallback: leftoverDestination)
            } == true
        let acknowledge: @Sendable () -> Void = { [self] in
            pump.async { [self] in
                if (try? agent.acknowledgeEvents(session: configuration.identifier, upToSeq: e.seq)) != nil {
                    DeliveryLedger.shared.record(configuration.identifier, e.seq)
                    if e.event.isDurable && !taken { durableSinceDrain = true }
                    deliver(batch, i + 1)
                } else {
                    pumping = false  // unacknowledged: it comes again on the next fetch
                }
            }
        }
        if taken {
            acknowledge()
        } else {
            handle(e, done: acknowledge)
        }
    }

    /// Turns one agent event into a callback; `done` runs when the app is finished with it.
    private func handle(_ e: Incoming, done: @escaping @Sendable () -> Void) {
        if case .invalidated(let error) = e.event {
            // The identifier is free from now on (a new session may be made in the callback).
            if !closed { closed = true; DeliveryLedger.shared.close(configuration.identifier) }
            present(.didBecomeInvalid(error: error.map { FerryTaskError(name: "Invalidated", message: $0) })) {
                [self] in
                done()
                DispatchQueue.global().async { self.disconnect() }
            }
            return
        }
        guard let task = task(e.task) else { done(); return }
        switch e.event {
        case .progress(let received, let expected, let written):
            task.progressed(received: received, expected: expected)
            guard let d = task as? FerryDownloadTask else { done(); return }
            present(
                .didWriteData(
                    d, bytesWritten: written, totalBytesWritten: received, totalBytesExpectedToWrite: expected),
                done: done)
        case .sent(let sent, let expected, let written):
            task.sent(sent, expected: expected)
            present(
                .didSendBodyData(task, bytesSent: written, totalBytesSent: sent, totalBytesExpectedToSend: expected),
                done: done)
        case .resumed(let offset, let expected):
            guard let d = task as? FerryDownloadTask else { done(); return }
            present(.didResumeAtOffset(d, fileOffset: offset, expectedTotalBytes: expected), done: done)
        case .finished(let file, let received):
            task.progressed(received: received, expected: nil)
            guard let d = task as? FerryDownloadTask else { done(); return }
            let location = URL(fileURLWithPath: file)
            // Handed over before, moved by the app, which died before the acknowledgement:
            // the file is already where the app wanted it. Nothing to show again.
            guard FileManager.default.fileExists(atPath: file) else { done(); return }
            present(.didFinishDownloading(d, location: location)) { [self] in
                // Not when the session stopped inside the callback: the event comes again.
                if !pump.sync(execute: { stopped }) { claimLeftover(location) }
                done()
            }
        case .uploaded(let sent, let file, let status, let cut, let headers):
            task.sent(sent, expected: nil)
            // The reply's file is the agent's (in the inbox, gone once acknowledged): read now.
            let data = file.isEmpty ? Data() : (FileManager.default.contents(atPath: file) ?? Data())
            (task as? FerryUploadTask)?.replied(
                FerryUploadReply(statusCode: status, data: data, isCut: cut, headers: headers ?? [:]))
            done()
        case .completed(let message, let name, let resumable):
            let error = message.map {
                FerryTaskError(
                    name: name ?? "Failed", message: $0,
                    resumeData: resumable ? e.resumeData.map { Data($0) } : nil)
            }
            task.completed(error)
            present(.didComplete(task, error: error), done: done)
        case .challenge(let scheme, let realm, let host, let failures, let proxy):
            let challenge = FerryAuthenticationChallenge(
                scheme: scheme, realm: realm, host: host,
                previousFailureCount: failures, isProxy: proxy)
            // Acknowledged once the callback returned *and* the app answered, so that an app that
            // dies before answering is asked again.
            let gate = AnswerGate(done)
            let respond: @Sendable (FerryChallengeDisposition) -> Void = { [self] disposition in
                guard gate.answer() else { return }
                let answer: ChallengeReply
                switch disposition {
                case .useCredential(let user, let password):
                    answer = .credential(Credential(user: user, password: password))
                case .use(let c):
                    let keep: CredentialPersistence =
                        switch c.persistence {
                        case .none: .none;
                        case .forSession: .forSession;
                        case .permanent: .permanent
                        }
                    answer = .credential(Credential(user: c.user, password: c.password), persistence: keep)
                case .performDefaultHandling: answer = .reject
                case .cancelAuthenticationChallenge: answer = .cancel
                }
                try? agent.answerChallenge(task: Int64(task.taskIdentifier), answer: answer)
                gate.finish()
            }
            present(.didReceiveChallenge(task, challenge, respond: respond)) { gate.returned() }
        case .invalidated:
            done()
        }
    }

    /// A finished file the app did not move goes to the default destination (never deleted).
    private func claimLeftover(_ location: URL) {
        guard FileManager.default.fileExists(atPath: location.path) else { return }
        _ = try? FerryFiles.move(location, into: leftoverDestination)
    }

    var leftoverDestination: URL { configuration.defaultDestination ?? FerryFiles.downloadsDirectory }

    private func present(_ event: FerryEvent, done: @escaping @Sendable () -> Void) {
        guard let delegate else { mailbox.put(event, done: done); return }
        delegateQueue.addOperation { [self] in
            switch event {
            case .didWriteData(let t, let n, let total, let expected):
                delegate.urlSession(
                    self, downloadTask: t, didWriteData: n, totalBytesWritten: total,
                    totalBytesExpectedToWrite: expected)
            case .didResumeAtOffset(let t, let offset, let expected):
                delegate.urlSession(self, downloadTask: t, didResumeAtOffset: offset, expectedTotalBytes: expected)
            case .didFinishDownloading(let t, let location):
                delegate.urlSession(self, downloadTask: t, didFinishDownloadingTo: location)
            case .didSendBodyData(let t, let n, let total, let expected):
                delegate.urlSession(
                    self, task: t, didSendBodyData: n, totalBytesSent: total, totalBytesExpectedToSend: expected)
            case .didComplete(let t, let error):
                delegate.urlSession(self, task: t, didCompleteWithError: error)
            case .didReceiveChallenge(let t, let challenge, let respond):
                delegate.urlSession(self, task: t, didReceive: challenge, completionHandler: respond)
            case .didBecomeInvalid(let error):
                delegate.urlSession(self, didBecomeInvalidWithError: error)
            case .didFinishEventsForBackgroundSession:
                delegate.urlSessionDidFinishEvents(forBackgroundURLSession: self)
            }
            done()
        }
    }
}

/// Runs `done` once both the challenge callback returned and the app answered.
final class AnswerGate: @unchecked Sendable {
    private let lock = NSLock()
    private var answered = false, hasReturned = false, finished = false
    private let done: @Sendable () -> Void
    init(_ done: @escaping @Sendable () -> Void) { self.done = done }
    /// True the first time only: a challenge is answered once.
    func answer() -> Bool {
        lock.lock(); defer { lock.unlock() }; if answered { return false }; answered = true; return true
    }
    func finish() { step { finished = true } }
    func returned() { step { hasReturned = true } }
    private func step(_ body: () -> Void) {
        lock.lock()
        body()
        let fire = finished && hasReturned
        if fire { finished = false; hasReturned = false }
        lock.unlock()
        if fire { done() }
    }
}

/// The highest sequence number each session delivered in this process: a session object made
/// again for the same identifier (a reconnect) never shows an event twice.
final class DeliveryLedger: @unchecked Sendable {
    static let shared = DeliveryLedger()
    private let lock = NSCondition()
    func wait(_ session: String, atLeast seq: UInt64, until deadline: Date) -> Bool {
        lock.lock(); defer { lock.unlock() }
        while (seqs[session] ?? 0) < seq {
            if !lock.wait(until: deadline) { return (seqs[session] ?? 0) >= seq }
        }
        return true
    }
    private var seqs: [String: UInt64] = [:]
    func delivered(_ session: String) -> UInt64 { lock.lock(); defer { lock.unlock() }; return seqs[session] ?? 0 }
    func record(_ session: String, _ seq: UInt64) {
        lock.lock(); seqs[session] = max(seqs[session] ?? 0, seq); lock.broadcast(); lock.unlock()
    }
    private var live: Set<String> = []
    /// Marks the identifier as having a live session object; false if one already has.
    func open(_ session: String) -> Bool { lock.lock(); defer { lock.unlock() }; return live.insert(session).inserted }
    func close(_ session: String) { lock.lock(); live.remove(session); lock.unlock() }

    func reconcile(_ session: String, latest: UInt64) {
        lock.lock(); if (seqs[session] ?? 0) > latest { seqs[session] = 0 }; lock.unlock()
    }
}
