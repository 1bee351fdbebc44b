import Testing
@testable import FerryCore

private func machine(state: TaskState = .queued, etag: String? = nil, expected: Int64? = nil) -> TaskMachine {
    TaskMachine(TaskRecord(id: 7, session: "s", url: "http://h/f.bin", host: "h", state: state,
                           expected: expected, etag: etag))
}
private let backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)

@Suite struct TaskMachineTests {
    @Test func startFromScratchPlansWholeEntity() {
        var m = machine()
        let actions = m.start(partialBytes: 0, now: 1)
        #expect(m.record.state == .running)
        #expect(actions.contains(.startTransfer(.init(url: "http://h/f.bin", offset: 0, ifRange: nil, headers: [:], decodesContent: true))))
    }

    @Test func startWithValidatedPartialResumesWithIfRange() {
        var m = machine(etag: "\"abc\"")
        let actions = m.start(partialBytes: 500, now: 1)
        #expect(actions.contains(.startTransfer(.init(url: "http://h/f.bin", offset: 500, ifRange: "\"abc\"", headers: [:], decodesContent: true))))
        #expect(!actions.contains(.discardPartial))
    }

    @Test func partialWithoutValidatorIsDiscarded() {
        var m = machine()
        let actions = m.start(partialBytes: 500, now: 1)
        #expect(actions.first == .discardPartial)
        #expect(actions.contains(.startTransfer(.init(url: "http://h/f.bin", offset: 0, ifRange: nil, headers: [:], decodesContent: true))))
    }

    /// RFC 9110 §13.1.5: no If-Range date while holding an entity tag, and a weak tag cannot
    /// validate a range: the download starts over.
    @Test func aWeakETagMeansStartingOverNotADate() {
        var r = TaskRecord(session: "s", url: "http://h/x", host: "h", etag: "W/\"w\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(r.resumeValidator == nil)
        r.etag = "\"strong\""
        #expect(r.resumeValidator == "\"strong\"")
        r.etag = nil
        #expect(r.resumeValidator == "Mon, 01 Jan 2024 00:00:00 GMT")
        var m = machine(etag: "W/\"w\"")
        m.record.lastModified = "Mon, 01 Jan 2024 00:00:00 GMT"
        let actions = m.start(partialBytes: 500, now: 1)
        #expect(actions.first == .discardPartial)
        #expect(actions.contains { if case .startTransfer(let p) = $0 { p.offset == 0 && p.ifRange == nil } else { false } })
    }

    @Test func matching206AppendsAndEmitsResumed() {
        var m = machine(etag: "\"abc\"")
        _ = m.start(partialBytes: 500, now: 1)
        let (decision, actions) = m.responseBegan(status: 206, contentRangeStart: 500, totalLength: 2000,
                                                  etag: "\"abc\"", lastModified: nil, suggestedName: nil)
        #expect(decision == .append)
        #expect(actions.contains(.emit(.resumed(offset: 500, expected: 2000))))
        #expect(m.record.expected == 2000)
    }

    @Test func fullResponseInsteadOfRangeRestartsFromZeroWithNewValidator() {
        var m = machine(etag: "\"old\"")
        _ = m.start(partialBytes: 500, now: 1)
        let (decision, _) = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 2000,
                                           etag: "\"new\"", lastModified: nil, suggestedName: nil)
        #expect(decision == .restartFromZero)
        #expect(m.record.received == 0)
        #expect(m.record.etag == "\"new\"")
    }

    @Test func rangeAtWrongOffsetIsRejected() {
        var m = machine(etag: "\"abc\"")
        _ = m.start(partialBytes: 500, now: 1)
        let (decision, _) = m.responseBegan(status: 206, contentRangeStart: 0, totalLength: 2000,
                                           etag: "\"abc\"", lastModified: nil, suggestedName: nil)
        guard case .reject = decision else { Issue.record("expected reject, got \(decision)"); return }
    }

    @Test func transientFailureWaitsWithBackoff() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(TransferOutcome(curlCode: 7, curlMessage: "Couldn't connect", httpStatus: 0),
                                      backoff: backoff, resourceDeadline: nil, now: 10_000_000, random: 0.5)
        #expect(m.record.state == .waiting)
        #expect(m.record.reason == .retry)
        #expect(actions.contains(.scheduleRetry(atMicroseconds: 11_000_000)))
        // A second failure without progress doubles the delay.
        _ = m.retryDue(now: 11_000_000)
        _ = m.start(partialBytes: 0, now: 11_000_000)
        let again = m.transferEnded(TransferOutcome(curlCode: 7, httpStatus: 0), backoff: backoff,
                                    resourceDeadline: nil, now: 12_000_000, random: 0.5)
        #expect(again.contains(.scheduleRetry(atMicroseconds: 14_000_000)))
    }

    @Test func offlineFailureWaitsForTheNetworkNotATimer() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(TransferOutcome(curlCode: 6, curlMessage: "Could not resolve host", httpStatus: 0),
                                      backoff: backoff, resourceDeadline: nil, now: 5, random: 0.5, networkAvailable: false)
        #expect(m.record.state == .waiting)
        #expect(m.record.reason == .network)
        #expect(!actions.contains { if case .scheduleRetry = $0 { return true }; return false })
        #expect(m.retryDue(now: 6).isEmpty)          // a retry timer does not wake it…
        #expect(m.networkReturned(now: 7) == [.persist])   // …the network does
        #expect(m.record.state == .queued)
    }

    @Test func retryAfterIsHonoured() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 503, retryAfterSeconds: 30),
                                      backoff: backoff, resourceDeadline: nil, now: 0, random: 0.5)
        #expect(actions.contains(.scheduleRetry(atMicroseconds: 30_000_000)))
    }

    @Test func notFoundFailsForGood() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 404), backoff: backoff,
                                      resourceDeadline: nil, now: 5, random: 0)
        #expect(m.record.state == .failed)
        #expect(m.record.errorName == "NotFound")
        #expect(actions.contains(.emit(.completed(error: "server answered HTTP 404: not found", errorName: "NotFound", resumable: false))))
    }

    /// A local failure says what the shell saw (which file, which operation), not just an errno.
    @Test func aLocalFailureKeepsTheShellsWords() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        let why = "cannot open staging file /s/staging/1.part: Is a directory"
        _ = m.transferEnded(.localFailure(errno: 21, message: why), backoff: backoff, resourceDeadline: nil, now: 5, random: 0)
        #expect(m.record.state == .failed)
        #expect(m.record.error == why)
        var bare = machine()
        _ = bare.start(partialBytes: 0, now: 0)
        _ = bare.transferEnded(TransferOutcome(curlCode: 23, httpStatus: 200, localErrno: 30), backoff: backoff,
                               resourceDeadline: nil, now: 5, random: 0)
        #expect(bare.record.error == "cannot write the download: read-only file system")
    }

    @Test func resourceDeadlineTurnsRetryIntoFailure() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        _ = m.transferEnded(TransferOutcome(curlCode: 28, httpStatus: 0), backoff: backoff,
                            resourceDeadline: 500_000, now: 0, random: 0.5)
        #expect(m.record.state == .failed)
        #expect(m.record.errorName == "TimedOut")
    }

    @Test func shortBodyIsRetriedNotCompleted() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        _ = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 1000, etag: "\"e\"", lastModified: nil, suggestedName: nil)
        _ = m.progressed(received: 400, now: 1)
        let actions = m.transferEnded(TransferOutcome(curlCode: 0, httpStatus: 200, bytesThisAttempt: 400),
                                      backoff: backoff, resourceDeadline: nil, now: 2, random: 0.5)
        #expect(m.record.state == .waiting)
        #expect(!actions.contains(.finalize))
    }

    @Test func successFinalizesThenCompletes() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        _ = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 10, etag: nil, lastModified: nil, suggestedName: nil)
        _ = m.progressed(received: 10, now: 1)
        let actions = m.transferEnded(TransferOutcome(curlCode: 0, httpStatus: 200, bytesThisAttempt: 10),
                                      backoff: backoff, resourceDeadline: nil, now: 2, random: 0)
        #expect(actions.contains(.finalize))
        #expect(m.record.state == .running)
        let done = m.finalized(file: "/d/f.bin", now: 3)
        #expect(m.record.state == .completed)
        #expect(done.contains(.emit(.finished(file: "/d/f.bin", received: 10))))
    }

    @Test func rangeErrorRestartsFromZeroAtOnce() {
        var m = machine(etag: "\"e\"")
        _ = m.start(partialBytes: 100, now: 0)
        let actions = m.transferEnded(TransferOutcome(curlCode: 0, httpStatus: 416), backoff: backoff,
                                      resourceDeadline: nil, now: 9, random: 0)
        #expect(actions.contains(.discardPartial))
        #expect(actions.contains(.scheduleRetry(atMicroseconds: 9)))
        #expect(m.record.etag == nil)
    }

    @Test func diskFullWaitsForSpace() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        _ = m.transferEnded(TransferOutcome(curlCode: 23, httpStatus: 200, localErrno: 28), backoff: backoff,
                            resourceDeadline: nil, now: 0, random: 0.5)
        #expect(m.record.state == .waiting)
        #expect(m.record.reason == .space)
    }

    @Test func diskFullRechecksBackOffAndResumeRetriesAtOnce() throws {
        var m = machine()
        let full = TransferOutcome(curlCode: 23, httpStatus: 200, localErrno: 28, localMessage: "state disk full")
        _ = m.start(partialBytes: 0, now: 0)
        let first = m.transferEnded(full, backoff: backoff, resourceDeadline: nil, now: 0, random: 0, spaceRecheck: 30)
        #expect(first == [.persist, .warnNoSpace, .scheduleRetry(atMicroseconds: 30)])
        #expect(m.record.error == "state disk full")
        var delays: [Int64] = []
        for now in [Int64(100), 200, 300, 400, 500, 600] {
            _ = m.retryDue(now: now)
            _ = m.start(partialBytes: 0, now: now)
            _ = m.transferEnded(full, backoff: backoff, resourceDeadline: nil, now: now, random: 0, spaceRecheck: 30)
            delays.append(m.record.retryAt! - now)
        }
        #expect(delays == [60, 120, 240, 300, 300, 300])   // doubling, capped at ten times the first
        // No resource deadline: a full disk never fails the task.
        #expect(m.record.state == .waiting && m.record.reason == .space)
        #expect(try m.resume(now: 700) == [.persist])
        #expect(m.record.state == .queued && m.record.retryAt == nil)
    }

    @Test func completeBytesAreSavedWithoutFetching() {
        var m = machine(etag: "\"e\"", expected: 1_000)
        #expect(m.start(partialBytes: 1_000, now: 1) == [.persist, .finalize])
        #expect(m.record.state == .running && m.record.received == 1_000)
        // The destination is full: wait, keeping every byte (no discardPartial).
        let actions = m.finalizeNeedsSpace(message: "no space in /media/usb", recheck: 30, now: 2)
        #expect(actions == [.persist, .warnNoSpace, .scheduleRetry(atMicroseconds: 32)])
        #expect(m.record.state == .waiting && m.record.reason == .space)
    }

    @Test func checksumMismatchQuarantinesAndRetryDiscards() throws {
        var m = machine(etag: "\"e\"", expected: 10)
        _ = m.start(partialBytes: 10, now: 1)
        let actions = m.checksumMismatched(message: "SHA-256 mismatch", now: 2)
        #expect(actions.first == .quarantine)
        #expect(!actions.contains(.discardPartial))
        #expect(m.record.state == .failed && m.record.errorName == "ChecksumMismatch")
        #expect(try m.resume(now: 3) == [.discardPartial, .persist])
    }

    @Test func pauseStopsRunningTransferAndResumeRequeues() throws {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        #expect(try m.pause(now: 1) == [.stopTransfer, .persist])
        // The aborted attempt's outcome must not change a paused task.
        #expect(m.transferEnded(TransferOutcome(curlCode: 42, httpStatus: 200), backoff: backoff,
                                resourceDeadline: nil, now: 2, random: 0).isEmpty)
        #expect(m.record.state == .paused)
        _ = try m.resume(now: 3)
        #expect(m.record.state == .queued)
    }

    @Test func cancelDiscardsUnlessResumeDataWanted() throws {
        var a = machine(state: .paused)
        #expect(try a.cancel(keepPartial: false, now: 1).contains(.discardPartial))
        var b = machine(state: .paused)
        #expect(!(try b.cancel(keepPartial: true, now: 1)).contains(.discardPartial))
        #expect(throws: FerryError.self) { try a.cancel(keepPartial: false, now: 2) }
        #expect(throws: FerryError.self) { try a.resume(now: 2) }
    }

    @Test func progressIsRateLimited() {
        var m = machine()
        _ = m.start(partialBytes: 0, now: 0)
        #expect(m.progressed(received: 10, now: 1_000_000).count == 1)
        #expect(m.progressed(received: 20, now: 1_050_000).isEmpty)
        #expect(m.progressed(received: 30, now: 1_100_000) == [.emit(.progress(received: 30, expected: nil, written: 20))])
    }
}
