import Foundation

/// The life of one task as a value: each event returns what the I/O shell must do.
/// No I/O, no clocks, no randomness inside: time and random numbers come in as arguments.
public struct TaskMachine: Sendable {
    public private(set) var record: TaskRecord
    /// When the last progress event went out (µs), for rate limiting.
    private var lastProgressAt: Int64?
    private var lastProgressBytes: Int64 = 0
    /// The offset the running attempt asked for.
    private var requestedOffset: Int64 = 0

    public init(_ record: TaskRecord) {
        self.record = record
        self.lastProgressBytes = record.received
    }

    /// What the shell asks curl for.
    public struct TransferPlan: Sendable, Equatable {
        public var url: String
        /// Resume from this byte (0 = whole entity).
        public var offset: Int64
        /// Sent as If-Range when offset > 0.
        public var ifRange: String?
        public var headers: [String: String]
    }

    public enum Action: Sendable, Equatable {
        case startTransfer(TransferPlan)
        case stopTransfer
        /// Remove the staging bytes (cancel, or a partial we cannot validate).
        case discardPartial
        /// Verify (checksum) and move the staging file to its destination.
        case finalize
        /// Keep the finished bytes out of the user's way (checksum mismatch): never delivered.
        case quarantine
        /// Tell the user a file waits for disk space (the shell says so once per task).
        case warnNoSpace
        case scheduleRetry(atMicroseconds: Int64)
        case emit(SessionEvent)
        /// Write the record to the store now (state changes; progress waits for a checkpoint).
        case persist
    }

    /// What to do with the first body bytes of a response.
    public enum BodyDecision: Sendable, Equatable {
        /// 206 at the offset we asked for: append.
        case append
        /// A full entity (200): truncate the staging file and write from zero.
        case restartFromZero
        /// The response cannot be used (wrong range): abort this attempt.
        case reject(String)
    }

    /// Minimum time between two progress events of one task (~10 per second).
    public static let progressInterval: Int64 = 100_000

    // MARK: - Scheduling

    /// The scheduler gave this task a slot. `partialBytes` is the size of the staging file.
    public mutating func start(partialBytes: Int64, now: Int64) -> [Action] {
        guard record.state == .queued || record.state == .waiting else { return [] }
        var actions: [Action] = []
        var offset = partialBytes
        // Every byte of the entity is on disk already (a crash or a full destination stopped
        // the task between the last byte and its final name): save it, fetch nothing.
        if record.kind == .download, let expected = record.expected, expected > 0, partialBytes == expected {
            record.received = expected
            record.state = .running
            record.reason = nil
            record.retryAt = nil
            record.updated = now
            return [.persist, .finalize]
        }
        // Resume only what we can validate; anything else restarts cleanly.
        if offset > 0 && record.resumeValidator == nil {
            actions.append(.discardPartial)
            offset = 0
        }
        if let expected = record.expected, offset > expected {
            actions.append(.discardPartial)
            offset = 0
        }
        record.received = offset
        lastProgressBytes = offset
        requestedOffset = offset
        record.state = .running
        record.reason = nil
        record.retryAt = nil
        record.updated = now
        let plan = TransferPlan(url: record.url, offset: offset,
                                ifRange: offset > 0 ? record.resumeValidator : nil, headers: record.headers)
        actions.append(.persist)
        actions.append(.startTransfer(plan))
        return actions
    }

    /// What to do with a response's body, from its status and range alone: the transfer decides
    /// this itself when the first bytes come (inside curl), and the machine agrees afterwards.
    public static func bodyDecision(status: Int, contentRangeStart: Int64?, requestedOffset: Int64) -> BodyDecision {
        guard status == 206 else { return .restartFromZero }
        guard let start = contentRangeStart, start == requestedOffset else {
            return .reject("server sent a byte range starting at \(contentRangeStart.map(String.init) ?? "?") instead of \(requestedOffset)")
        }
        return .append
    }

    /// Response headers of the final response (after redirects) and the decision for its body.
    public mutating func responseBegan(status: Int, contentRangeStart: Int64?, totalLength: Int64?,
                                       etag: String?, lastModified: String?, suggestedName: String?) -> (BodyDecision, [Action]) {
        var actions: [Action] = []
        let decision = Self.bodyDecision(status: status, contentRangeStart: contentRangeStart, requestedOffset: requestedOffset)
        if case .reject = decision { return (decision, []) }
        if decision == .append {
            if requestedOffset > 0 { actions.append(.emit(.resumed(offset: requestedOffset, expected: totalLength ?? record.expected))) }
        } else {
            record.received = 0
            lastProgressBytes = 0
        }
        if decision == .restartFromZero || etag != nil || lastModified != nil {
            // A new entity (or a confirmed one): remember its validators for the next resume.
            record.etag = etag
            record.lastModified = lastModified
        }
        if let totalLength { record.expected = totalLength }
        if let suggestedName { record.suggestedName = suggestedName }
        actions.append(.persist)
        return (decision, actions)
    }

    /// Body bytes arrived; `received` is the running total for the entity.
    public mutating func progressed(received: Int64, now: Int64) -> [Action] {
        record.received = received
        if let last = lastProgressAt, now - last < Self.progressInterval { return [] }
        let written = received - lastProgressBytes
        lastProgressAt = now
        lastProgressBytes = received
        return [.emit(progressEvent(written: written))]
    }

    /// Downloads report bytes received (didWriteData), uploads bytes sent (didSendBodyData).
    private func progressEvent(written: Int64) -> SessionEvent {
        record.kind == .upload
            ? .sent(sent: record.received, expected: record.expected, written: written)
            : .progress(received: record.received, expected: record.expected, written: written)
    }

    // MARK: - End of an attempt

    /// The attempt ended. `random` in 0..<1 feeds the jitter.
    /// With `networkAvailable` false an attempt that never reached its server waits for the
    /// network instead of a timer (other failures are retried: the host was reachable).
    /// With `canChallenge` (a client listens to the session), a 401 asks the app for credentials
    /// instead of failing the task.
    public mutating func transferEnded(_ outcome: TransferOutcome, backoff: Backoff, resourceDeadline: Int64?,
                                       now: Int64, random: Double, networkAvailable: Bool = true,
                                       canChallenge: Bool = false, spaceRecheck: Int64 = 30_000_000) -> [Action] {
        guard record.state == .running else { return [] }   // paused/canceled meanwhile: nothing to do
        record.updated = now
        if canChallenge, outcome.httpStatus == 401 {
            let (scheme, realm) = Self.parseChallenge(outcome.authenticate)
            let failures = record.attempts
            record.state = .waiting
            record.reason = .credentials
            record.error = "server answered HTTP 401: waiting for the app to answer the authentication challenge"
            record.retryAt = nil
            return [.persist, .emit(.challenge(scheme: scheme, realm: realm,
                                               host: record.host, previousFailures: failures))]
        }
        switch FailureClassifier.classify(outcome) {
        case .success:
            if let expected = record.expected, record.received != expected {
                return retry(message: "connection closed after \(record.received) of \(expected) bytes",
                             progressed: outcome.bytesThisAttempt > 0, retryAfter: nil, reason: .retry,
                             backoff: backoff, deadline: resourceDeadline, now: now, random: random)
            }
            if record.expected == nil { record.expected = record.received }
            var actions: [Action] = [.emit(progressEvent(written: record.received - lastProgressBytes))]
            lastProgressBytes = record.received
            if record.kind == .upload {
                // The server took the whole body and answered 2xx: nothing to move into place.
                record.state = .completed
                record.error = nil
                record.errorName = nil
                record.reason = nil
                return actions + [.persist, .emit(.completed(error: nil, errorName: nil, resumable: false))]
            }
            actions.append(.finalize)
            return actions
        case .transient(let message) where !networkAvailable && outcome.neverReachedServer:
            record.state = .waiting
            record.reason = .network
            record.error = message
            record.retryAt = nil
            return [.persist]
        case .transient(let message):
            return retry(message: message, progressed: outcome.bytesThisAttempt > 0,
                         retryAfter: outcome.retryAfterSeconds, reason: .retry,
                         backoff: backoff, deadline: resourceDeadline, now: now, random: random)
        case .diskFull(let message):
            return waitForSpace(message: message, recheck: spaceRecheck, now: now)
        case .rangeRejected(let message):
            // Start over from byte zero, at once; the validators go with the old bytes.
            record.etag = nil
            record.lastModified = nil
            record.received = 0
            record.error = message
            record.state = .waiting
            record.reason = .retry
            record.retryAt = now
            return [.discardPartial, .persist, .scheduleRetry(atMicroseconds: now)]
        case .permanent(let name, let message):
            return fail(name: name, message: message, resumable: false, now: now)
        }
    }

    private mutating func retry(message: String, progressed: Bool, retryAfter: Int64?, reason: WaitReason,
                                backoff: Backoff, deadline: Int64?, now: Int64, random: Double) -> [Action] {
        // Progress since the last failure means the path works: start the backoff again.
        record.attempts = progressed ? 1 : record.attempts + 1
        let delay = backoff.delayMilliseconds(attempt: record.attempts, retryAfterSeconds: retryAfter, random: random) * 1_000
        if let deadline, now + delay > deadline {
            return fail(name: "TimedOut", message: "gave up: resource timeout reached (last error: \(message))",
                        resumable: record.received > 0 && record.resumeValidator != nil, now: now)
        }
        record.state = .waiting
        record.reason = reason
        record.error = message
        record.retryAt = now + delay
        return [.persist, .scheduleRetry(atMicroseconds: now + delay)]
    }

    private mutating func fail(name: String, message: String, resumable: Bool, now: Int64) -> [Action] {
        record.state = .failed
        record.reason = nil
        record.retryAt = nil
        record.error = message
        record.errorName = name
        record.updated = now
        var actions: [Action] = [.persist, .emit(.completed(error: message, errorName: name, resumable: resumable))]
        if !resumable { actions.insert(.discardPartial, at: 0) }
        return actions
    }

    /// The shell moved the file into place.
    public mutating func finalized(file: String, now: Int64) -> [Action] {
        record.state = .completed
        record.file = file
        record.error = nil
        record.errorName = nil
        record.reason = nil
        record.updated = now
        return [.persist, .emit(.finished(file: file, received: record.received)),
                .emit(.completed(error: nil, errorName: nil, resumable: false))]
    }

    /// Verifying or moving the file failed (destination unwritable).
    public mutating func finalizeFailed(name: String, message: String, now: Int64) -> [Action] {
        fail(name: name, message: message, resumable: false, now: now)
    }

    /// The finished bytes do not match the checksum the app gave: they go to quarantine,
    /// never to the destination; removing or retrying the task discards them.
    public mutating func checksumMismatched(message: String, now: Int64) -> [Action] {
        var actions = fail(name: "ChecksumMismatch", message: message, resumable: false, now: now)
        actions.removeAll { $0 == .discardPartial }
        return [.quarantine] + actions
    }

    /// The destination's disk is full: every byte stays in staging and the task waits for space.
    public mutating func finalizeNeedsSpace(message: String, recheck: Int64 = 30_000_000, now: Int64) -> [Action] {
        guard record.state == .running else { return [] }
        return waitForSpace(message: message, recheck: recheck, now: now)
    }

    /// A full disk is no reason to give up a task or its bytes: wait, and look again after
    /// `recheck` µs, doubling up to ten times that (30 s … 5 min by default); `Resume` tries at once.
    private mutating func waitForSpace(message: String, recheck: Int64, now: Int64) -> [Action] {
        record.attempts += 1
        let delay = min(recheck << Int64(min(record.attempts - 1, 8)), recheck * 10)
        record.state = .waiting
        record.reason = .space
        record.error = message
        record.retryAt = now + delay
        record.updated = now
        return [.persist, .warnNoSpace, .scheduleRetry(atMicroseconds: now + delay)]
    }

    /// The network is back: tasks waiting for it go back into the queue.
    public mutating func networkReturned(now: Int64) -> [Action] {
        guard record.state == .waiting, record.reason == .network else { return [] }
        record.state = .queued
        record.reason = nil
        record.attempts = 0
        record.updated = now
        return [.persist]
    }

    /// The network changed under a running transfer: stop it and queue it again at once, on a
    /// new connection. No retry is counted; an attempt that then cannot reach its server waits
    /// for the network (reason network), one that can continues from its bytes.
    public mutating func networkChanged(now: Int64) -> [Action] {
        guard record.state == .running else { return [] }
        record.state = .queued
        record.reason = nil
        record.updated = now
        return [.stopTransfer, .persist]
    }

    /// A scheduled retry is due: back into the queue.
    public mutating func retryDue(now: Int64) -> [Action] {
        guard record.state == .waiting, record.reason == .retry || record.reason == .space else { return [] }
        record.state = .queued
        record.reason = nil
        record.retryAt = nil
        record.updated = now
        return [.persist]
    }

    /// How an app answered a challenge.
    public enum ChallengeAnswer: Sendable, Equatable {
        /// Try again; the shell sends the credential with the next attempt.
        case useCredential
        /// Fail the task as the server answered (HTTP 401).
        case reject
        case cancel
    }

    public mutating func answerChallenge(_ answer: ChallengeAnswer, now: Int64) throws -> [Action] {
        guard record.state == .waiting, record.reason == .credentials else {
            throw FerryError(.invalidState, "task \(record.id) is not waiting for credentials")
        }
        switch answer {
        case .useCredential:
            record.attempts += 1   // counts the credentials tried: previousFailures of the next challenge
            record.state = .queued
            record.reason = nil
            record.updated = now
            return [.persist]
        case .reject:
            return fail(name: "AuthenticationRequired", message: "server answered HTTP 401: authentication required",
                        resumable: false, now: now)
        case .cancel:
            return try cancel(keepPartial: false, now: now)
        }
    }

    /// "Basic realm=\"x\", charset=…" → ("Basic", "x").
    static func parseChallenge(_ header: String?) -> (String, String) {
        guard let header, !header.isEmpty else { return ("", "") }
        let scheme = String(header.prefix { $0 != " " })
        var realm = ""
        if let r = header.range(of: "realm=", options: .caseInsensitive) {
            var rest = header[r.upperBound...]
            if rest.first == "\"" {
                rest = rest.dropFirst()
                realm = String(rest.prefix { $0 != "\"" })
            } else {
                realm = String(rest.prefix { $0 != "," && $0 != " " })
            }
        }
        return (scheme, realm)
    }

    // MARK: - Requests from clients

    public mutating func pause(now: Int64) throws -> [Action] {
        switch record.state {
        case .paused: return []
        case .running:
            record.state = .paused; record.updated = now; record.reason = nil
            return [.stopTransfer, .persist]
        case .queued, .waiting:
            record.state = .paused; record.updated = now; record.reason = nil; record.retryAt = nil
            return [.persist]
        case .completed, .failed, .canceled:
            throw FerryError(.invalidState, "task \(record.id) is \(record.state.rawValue) and cannot be paused")
        }
    }

    public mutating func resume(now: Int64) throws -> [Action] {
        switch record.state {
        case .paused, .failed:
            // Quarantined bytes (a checksum mismatch) are never retried from.
            let discard: [Action] = record.errorName == "ChecksumMismatch" ? [.discardPartial] : []
            record.state = .queued; record.updated = now
            record.error = nil; record.errorName = nil; record.attempts = 0
            return discard + [.persist]
        case .waiting where record.reason == .space || record.reason == .retry || record.reason == .network:
            // The user says "try now" (space was freed, the cable is back): no waiting for a timer.
            record.state = .queued; record.updated = now
            record.reason = nil; record.retryAt = nil; record.attempts = 0
            return [.persist]
        case .queued, .running, .waiting: return []
        case .completed, .canceled:
            throw FerryError(.invalidState, "task \(record.id) is \(record.state.rawValue) and cannot be resumed")
        }
    }

    /// Cancel; with `keepPartial` the staging bytes stay for resume data.
    public mutating func cancel(keepPartial: Bool, now: Int64) throws -> [Action] {
        guard !record.state.isFinal else {
            throw FerryError(.invalidState, "task \(record.id) is already \(record.state.rawValue)")
        }
        var actions: [Action] = []
        if record.state == .running { actions.append(.stopTransfer) }
        if !keepPartial { actions.append(.discardPartial) }
        record.state = .canceled
        record.reason = nil
        record.retryAt = nil
        record.error = "canceled"
        record.errorName = "Canceled"
        record.updated = now
        actions.append(.persist)
        actions.append(.emit(.completed(error: "canceled", errorName: "Canceled", resumable: keepPartial)))
        return actions
    }
}
