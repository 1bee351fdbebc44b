/// How attempts end, and saving the finished file.
extension TaskMachine {
    // MARK: - End of an attempt

    /// The attempt ended. `random` in 0..<1 feeds the jitter.
    /// With `networkAvailable` false an attempt that never reached its server waits for the
    /// network instead of a timer (other failures are retried: the host was reachable).
    /// With `canChallenge` (a client listens to the session), a 401 asks the app for credentials
    /// instead of failing the task; a proxy's 407 too, or the user (`userAnswers`: the user's own
    /// task, answered with `ferry login`).
    public mutating func transferEnded(
        _ outcome: TransferOutcome, backoff: Backoff, resourceDeadline: Int64?,
        now: Int64, random: Double, networkAvailable: Bool = true,
        canChallenge: Bool = false, userAnswers: Bool = false,
        spaceRecheck: Int64 = 30_000_000
    ) -> [Action] {
        guard record.state == .running else { return [] }  // paused/canceled meanwhile: nothing to do
        record.updated = now
        if let step = uploadStep, let actions = resumableStepEnded(step, outcome, now: now) { return actions }
        if canChallenge, outcome.httpStatus == 401 {
            let (scheme, realm) = Self.parseChallenge(outcome.authenticate)
            let failures = record.attempts
            wait(
                .credentials,
                error: "server answered HTTP 401: waiting for the app to answer the authentication challenge",
                retryAt: nil, now: now)
            // The host that asked: an upload resource or a redirect may be on another origin.
            let host = outcome.effectiveURL.flatMap(Origin.init)?.host ?? record.host
            return [.persist, .emit(.challenge(scheme: scheme, realm: realm, host: host, previousFailures: failures))]
        }
        // A proxy that wants credentials it was not given: they are asked for (the app's
        // challenge, or the user's `ferry login`), never retried blindly for days.
        if let proxy = outcome.proxy, outcome.asksProxyCredentials, canChallenge || userAnswers {
            let (scheme, realm) = Self.parseChallenge(outcome.authenticate)
            let failures = record.attempts
            wait(
                .credentials,
                error: "the proxy \(proxy) wants credentials (HTTP 407): waiting for them (ferry login \(record.id))",
                retryAt: nil, now: now)
            let host = Origin(proxy)?.host ?? proxy
            return [
                .persist,
                .emit(.challenge(scheme: scheme, realm: realm, host: host, previousFailures: failures, proxy: true)),
            ]
        }
        if outcome.curlCode == 1, record.kind == .upload, Self.downgrades(record.url, to: "http:") {
            // CURLE_UNSUPPORTED_PROTOCOL: its redirects may go to https only (httpsRedirectsOnly).
            return fail(
                name: "UnsupportedScheme",
                message: "the server redirected this https upload to another scheme: refused, the file would travel "
                    + "unencrypted (\(outcome.curlMessage))",
                resumable: false, now: now)
        }
        switch FailureClassifier.classify(outcome) {
        case .success:
            if let expected = record.expected, record.received != expected {
                return retry(
                    message: "connection closed after \(record.received) of \(expected) bytes",
                    progressed: outcome.bytesThisAttempt > 0, retryAfter: nil, reason: .retry,
                    backoff: backoff, deadline: resourceDeadline, now: now, random: random)
            }
            if record.expected == nil { record.expected = record.received }
            var actions: [Action] = [.emit(progressEvent(written: record.received - lastProgressBytes))]
            lastProgressBytes = record.received
            if record.kind == .upload {
                // The server took the whole body and answered 2xx: its reply (in staging) goes
                // to the session's inbox as a finished download would.
                record.replyStatus = outcome.httpStatus
                record.replyCut = outcome.replyCut
                record.replyHeaders = outcome.replyHeaders
            }
            actions.append(.finalize)
            return actions
        case .transient(let message) where !networkAvailable && outcome.neverReachedServer:
            wait(.network, error: message, retryAt: nil, now: now)
            return [.persist]
        case .proxy(let message) where !networkAvailable:
            wait(.network, error: message, retryAt: nil, now: now)
            return [.persist]
        case .proxy(let message):
            return retry(
                message: message, progressed: false, retryAfter: nil, reason: .proxy,
                backoff: backoff, deadline: resourceDeadline, now: now, random: random)
        case .transient(let message):
            return retry(
                message: message, progressed: outcome.bytesThisAttempt > 0,
                retryAfter: outcome.retryAfterSeconds, reason: .retry,
                backoff: backoff, deadline: resourceDeadline, now: now, random: random)
        case .diskFull(let message):
            return waitForSpace(message: message, recheck: spaceRecheck, now: now)
        case .rangeRejected(let message):
            // Start over from byte zero, at once; the validators go with the old bytes.
            record.etag = nil
            record.lastModified = nil
            record.received = 0
            wait(.retry, error: message, retryAt: now, now: now)
            return [.discardPartial, .persist, .scheduleRetry(atMicroseconds: now)]
        case .permanent(let name, let message):
            // A link that stopped working (expired or revoked: 401, 403, 404, 410) keeps the
            // bytes it fetched: a new URL (SetURL) or resume data may continue them.
            let linkEnded = [401, 403, 404, 410].contains(outcome.httpStatus) && record.kind == .download
            return fail(
                name: name, message: message + discoveryHint(outcome),
                resumable: linkEnded && record.received > 0 && record.resumeValidator != nil, now: now)
        }
    }

    private mutating func retry(
        message: String, progressed: Bool, retryAfter: Int64?, reason: WaitReason,
        backoff: Backoff, deadline: Int64?, now: Int64, random: Double
    ) -> [Action] {
        // Progress since the last failure means the path works: start the backoff again.
        record.attempts = progressed ? 1 : record.attempts + 1
        let delay =
            backoff.delayMilliseconds(attempt: record.attempts, retryAfterSeconds: retryAfter, random: random) * 1_000
        let resumable = record.received > 0 && record.resumeValidator != nil
        if let most = record.maxAttempts, record.attempts >= most {
            return fail(
                name: "TooManyAttempts",
                message: "gave up after \(most) attempt\(most == 1 ? "" : "s") (last error: \(message))",
                resumable: resumable, now: now)
        }
        if let own = record.deadline, now + delay > own {
            return fail(
                name: "TimedOut", message: "gave up: the task's timeout was reached (last error: \(message))",
                resumable: resumable, now: now)
        }
        if let deadline, now + delay > deadline {
            return fail(
                name: "TimedOut", message: "gave up: resource timeout reached (last error: \(message))",
                resumable: record.received > 0 && record.resumeValidator != nil, now: now)
        }
        wait(reason, error: message, retryAt: now + delay, now: now)
        return [.persist, .scheduleRetry(atMicroseconds: now + delay)]
    }

    mutating func fail(name: String, message: String, resumable: Bool, now: Int64) -> [Action] {
        end(.failed, error: message, errorName: name, now: now)
        var actions: [Action] = [.persist, .emit(.completed(error: message, errorName: name, resumable: resumable))]
        if !resumable { actions.insert(.discardPartial, at: 0) }
        return actions
    }

    /// The shell moved the file into place.
    public mutating func finalized(file: String, now: Int64) -> [Action] {
        end(.completed, now: now)
        if record.kind == .upload { return uploadCompleted(replyFile: file) }
        record.file = file
        return [
            .persist, .emit(.finished(file: file, received: record.received)),
            .emit(.completed(error: nil, errorName: nil, resumable: false)),
        ]
    }

    /// An upload the server took: its reply is in the inbox (nil: it could not be kept there,
    /// which does not undo the upload).
    mutating func uploadCompleted(replyFile: String?) -> [Action] {
        record.replyFile = replyFile
        let reply = SessionEvent.uploaded(
            sent: record.received, replyFile: replyFile ?? "", status: record.replyStatus ?? 0,
            cut: record.replyCut, headers: record.replyHeaders)
        return [.persist, .emit(reply), .emit(.completed(error: nil, errorName: nil, resumable: false))]
    }

    /// Verifying or moving the file failed (destination unwritable).
    public mutating func finalizeFailed(name: String, message: String, now: Int64) -> [Action] {
        if record.kind == .upload {  // the upload happened; only its reply is lost
            end(.completed, now: now)
            return uploadCompleted(replyFile: nil)
        }
        return fail(name: name, message: message, resumable: false, now: now)
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

    /// The destination folder is gone or unwritable (a drive pulled, a share down): as for a
    /// full disk, every byte stays in staging and the task waits for the folder.
    public mutating func finalizeNeedsFolder(message: String, recheck: Int64 = 30_000_000, now: Int64) -> [Action] {
        guard record.state == .running else { return [] }
        return waitForSpace(message: message, recheck: recheck, now: now, reason: .folder)
    }

    /// A full disk is no reason to give up a task or its bytes: wait, and look again after
    /// `recheck` µs, doubling up to ten times that (30 s … 5 min by default); `Resume` tries at once.
    mutating func waitForSpace(message: String, recheck: Int64, now: Int64, reason: WaitReason = .space) -> [Action] {
        record.attempts += 1
        let delay = min(recheck << Int64(min(record.attempts - 1, 8)), recheck * 10)
        wait(reason, error: message, retryAt: now + delay, now: now)
        return [.persist] + (reason == .space ? [.warnNoSpace] : []) + [.scheduleRetry(atMicroseconds: now + delay)]
    }
}
