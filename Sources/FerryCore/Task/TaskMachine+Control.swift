import FoundationEssentials

/// The world changing around a task (network, retry timers, challenges) and the client's requests.
extension TaskMachine {
    /// The network is back: tasks waiting for it go back into the queue.
    public mutating func networkReturned(now: Int64) -> [Action] {
        guard record.state == .waiting, record.reason == .network else { return [] }
        move(to: .queued, now: now)
        record.attempts = 0
        return [.persist]
    }

    /// The network changed under a running transfer: stop it and queue it again at once, on a
    /// new connection. No retry is counted; an attempt that then cannot reach its server waits
    /// for the network (reason network), one that can continues from its bytes.
    public mutating func networkChanged(now: Int64) -> [Action] {
        guard record.state == .running else { return [] }
        move(to: .queued, now: now)
        return [.stopTransfer, .persist]
    }

    /// A scheduled retry is due: back into the queue.
    public mutating func retryDue(now: Int64) -> [Action] {
        guard record.state == .waiting, [.retry, .space, .proxy, .scheduled, .folder].contains(record.reason) else {
            return []
        }
        move(to: .queued, now: now)
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
            record.attempts += 1  // counts the credentials tried: previousFailures of the next challenge
            move(to: .queued, now: now)
            return [.persist]
        case .reject:
            return fail(
                name: "AuthenticationRequired", message: "server answered HTTP 401: authentication required",
                resumable: false, now: now)
        case .cancel:
            return try cancel(keepPartial: false, now: now)
        }
    }

    // MARK: - Remembered credentials

    /// A 401 the keyring may answer: the task waits while the shell looks, and nobody is told
    /// yet. It waits as for a retry, so that a lookup lost with the agent (a crash) only delays it.
    public mutating func awaitRememberedCredential(now: Int64, lookupLimit: Int64 = 60_000_000) -> [Action] {
        guard record.state == .running else { return [] }
        wait(
            .retry, error: "server answered HTTP 401: looking for a remembered credential", retryAt: now + lookupLimit,
            now: now)
        return [.persist]
    }

    /// The keyring (or the session) had a credential: the next attempt sends it.
    public mutating func rememberedCredentialFound(now: Int64) -> [Action] {
        guard record.state == .waiting, record.reason == .retry else { return [] }
        record.attempts += 1  // as for an app's answer: a second 401 tells the app one credential failed
        move(to: .queued, now: now)
        return [.persist]
    }

    /// Nothing remembered: the 401 is answered as it would have been (a challenge, or a failure).
    public mutating func noRememberedCredential(
        _ outcome: TransferOutcome, backoff: Backoff, resourceDeadline: Int64?,
        now: Int64, canChallenge: Bool
    ) -> [Action] {
        guard record.state == .waiting, record.reason == .retry else { return [] }
        record.state = .running
        return transferEnded(
            outcome, backoff: backoff, resourceDeadline: resourceDeadline, now: now, random: 0,
            canChallenge: canChallenge)
    }

    /// "Basic realm=\"x\", charset=…" → ("Basic", "x").
    static func parseChallenge(_ header: String?) -> (String, String) {
        guard let header, !header.isEmpty else { return ("", "") }
        let scheme = String(header.prefix { $0 != " " })
        var realm = ""
        if let r = header.rangeIgnoringASCIICase(of: "realm=") {
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
            move(to: .paused, now: now)
            return [.stopTransfer, .persist]
        case .queued, .waiting:
            move(to: .paused, now: now)
            return [.persist]
        case .completed, .failed, .canceled:
            throw FerryError(.invalidState, "task \(record.id) is \(record.state.rawValue) and cannot be paused")
        }
    }

    public mutating func resume(now: Int64) throws -> [Action] {
        switch record.state {
        case .paused where record.retryAt.map { $0 > now } == true:
            // Created paused with a start time still to come (the library's tasks): now it waits for it.
            let at = record.retryAt!
            wait(.scheduled, error: nil, retryAt: at, now: now)
            return [.persist, .scheduleRetry(atMicroseconds: at)]
        case .paused, .failed:
            // Quarantined bytes (a checksum mismatch) are never retried from.
            let discard: [Action] = record.errorName == "ChecksumMismatch" ? [.discardPartial] : []
            move(to: .queued, now: now)
            record.error = nil; record.errorName = nil; record.attempts = 0
            return discard + [.persist]
        case .waiting
        where record.reason == .space || record.reason == .retry || record.reason == .network || record.reason == .proxy
            || record.reason == .scheduled || record.reason == .folder:
            // The user says "try now" (space was freed, the cable is back; start it now): no waiting for a timer.
            move(to: .queued, now: now)
            record.attempts = 0
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
        end(.canceled, error: "canceled", errorName: "Canceled", now: now)
        actions.append(.persist)
        actions.append(.emit(.completed(error: "canceled", errorName: "Canceled", resumable: keepPartial)))
        return actions
    }
}
