import Testing
@testable import FerryCore

/// Challenges, uploads and relaunch throttling: the decisions behind the client library.
@Suite struct SessionLifecycleTests {
    let backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)

    func running(kind: TaskRecord.Kind = .download, expected: Int64? = nil) -> TaskMachine {
        var r = TaskRecord(id: 3, session: "s", url: "http://h/f", host: "h", expected: expected)
        r.kind = kind
        if kind == .upload { r.resumable = ResumableProtocol.none }   // a plain upload (no OPTIONS first)
        var m = TaskMachine(r)
        _ = m.start(partialBytes: 0, now: 1)
        return m
    }

    @Test func a401AsksTheAppWhenTheSessionListens() throws {
        var m = running()
        let actions = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 401, authenticate: #"Basic realm="Staff only", charset="UTF-8""#),
                                      backoff: backoff, resourceDeadline: nil, now: 2, random: 0, canChallenge: true)
        #expect(m.record.state == .waiting && m.record.reason == .credentials)
        #expect(actions.contains(.emit(.challenge(scheme: "Basic", realm: "Staff only", host: "h", previousFailures: 0))))
        #expect(!actions.contains(.discardPartial))
        // A credential queues it again and counts as a try.
        #expect(try m.answerChallenge(.useCredential, now: 3) == [.persist])
        #expect(m.record.state == .queued)
        _ = m.start(partialBytes: 0, now: 4)
        let again = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 401, authenticate: "Digest realm=x"),
                                    backoff: backoff, resourceDeadline: nil, now: 5, random: 0, canChallenge: true)
        #expect(again.contains(.emit(.challenge(scheme: "Digest", realm: "x", host: "h", previousFailures: 1))))
    }

    @Test func a401FailsWhenNobodyCanAnswer() {
        var m = running()
        _ = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 401), backoff: backoff, resourceDeadline: nil,
                            now: 2, random: 0, canChallenge: false)
        #expect(m.record.state == .failed && m.record.errorName == "AuthenticationRequired")
    }

    @Test func challengeAnswersRejectAndCancel() throws {
        var m = running()
        _ = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: 401), backoff: backoff, resourceDeadline: nil,
                            now: 2, random: 0, canChallenge: true)
        var n = m
        _ = try m.answerChallenge(.reject, now: 3)
        #expect(m.record.state == .failed && m.record.errorName == "AuthenticationRequired")
        _ = try n.answerChallenge(.cancel, now: 3)
        #expect(n.record.state == .canceled)
        // Only a waiting task can be answered.
        #expect(throws: FerryError.self) { try n.answerChallenge(.useCredential, now: 4) }
    }

    /// An upload's end keeps the server's reply (its file goes to the inbox like a download's),
    /// and a reply that cannot be kept does not undo the upload.
    @Test func uploadsReportSentBytesAndCompleteWithTheReply() {
        var m = running(kind: .upload, expected: 1000)
        var actions = m.progressed(received: 400, now: 1_000_000)
        #expect(actions == [.emit(.sent(sent: 400, expected: 1000, written: 400))])
        _ = m.progressed(received: 1000, now: 1_000_001)
        var outcome = TransferOutcome(curlCode: 0, httpStatus: 201, bytesThisAttempt: 1000)
        outcome.replyCut = true
        outcome.replyHeaders = ["location": "/objects/7"]
        actions = m.transferEnded(outcome, backoff: backoff, resourceDeadline: nil, now: 2_000_000, random: 0)
        #expect(actions.contains(.finalize) && m.record.replyStatus == 201 && m.record.replyCut)
        var lost = m
        actions = m.finalized(file: "/inbox/1-reply", now: 2_000_001)
        #expect(m.record.state == .completed && m.record.replyFile == "/inbox/1-reply" && m.record.file == nil)
        #expect(actions.contains(.emit(.uploaded(sent: 1000, replyFile: "/inbox/1-reply", status: 201, cut: true,
                                                  headers: ["location": "/objects/7"]))))
        #expect(actions.contains(.emit(.completed(error: nil, errorName: nil, resumable: false))))
        _ = lost.finalizeFailed(name: "InvalidDestination", message: "no inbox", now: 2_000_001)
        #expect(lost.record.state == .completed && lost.record.replyFile == nil)
    }

    @Test func anUploadCutShortIsRetried() {
        var m = running(kind: .upload, expected: 1000)
        _ = m.progressed(received: 600, now: 1)
        _ = m.transferEnded(TransferOutcome(curlCode: 0, httpStatus: 200, bytesThisAttempt: 600),
                            backoff: backoff, resourceDeadline: nil, now: 2, random: 0)
        #expect(m.record.state == .waiting && m.record.reason == .retry)
    }

    @Test func relaunchOnlyWhenEventsWaitAndNobodyListens() {
        let p = RelaunchPolicy()
        #expect(p.decide(pendingEvents: false, clientConnected: false, now: 0) == .none)
        #expect(p.decide(pendingEvents: true, clientConnected: true, now: 0) == .none)
        #expect(p.decide(pendingEvents: true, clientConnected: false, now: 0) == .launch)
    }

    @Test func aCrashingAppIsRelaunchedWithGrowingDelays() {
        var p = RelaunchPolicy()
        var now: Int64 = 0
        var delays: [Int64] = []
        for _ in 0..<5 {
            #expect(p.decide(pendingEvents: true, clientConnected: false, now: now) == .launch)
            p.launched(now: now)
            #expect(p.decide(pendingEvents: true, clientConnected: false, now: now) == .none)   // still running
            now += 100_000   // it crashes 0.1 s later, events still pending
            p.exited(now: now, pendingEvents: true)
            guard case .wait(let until) = p.decide(pendingEvents: true, clientConnected: false, now: now) else {
                Issue.record("expected a wait"); return
            }
            delays.append((until - now) / 1_000_000)
            now = until
        }
        #expect(delays == [2, 4, 8, 16, 32])
        #expect(p.describe(now: now)?.contains("5 time(s)") == true)
        // An app that says it handled its events is trusted again.
        p.launched(now: now)
        p.finishedEvents(now: now + 1)
        p.exited(now: now + 2, pendingEvents: true)
        #expect(p.failedLaunches == 0)
        #expect(p.decide(pendingEvents: true, clientConnected: false, now: now + 2) == .launch)
    }

    @Test func anAppThatLeftNothingPendingIsNotAFailure() {
        var p = RelaunchPolicy()
        p.launched(now: 0)
        p.exited(now: 1, pendingEvents: false)
        #expect(p.failedLaunches == 0 && p.describe(now: 1) == nil)
    }

    @Test func progressIsNotWorthALaunch() {
        var q = EventQueue()
        q.append(task: 1, .progress(received: 1, expected: nil, written: 1))
        q.append(task: 2, .sent(sent: 1, expected: nil, written: 1))
        #expect(!q.hasDurable)
        q.append(task: 1, .finished(file: "/f", received: 1))
        #expect(q.hasDurable)
    }

    @Test func sessionPolicyHonoursMeteredDiscretionaryAndHostLimits() {
        let any = SessionPolicy()
        #expect(any.mayStart(metered: true, powerSaver: true, runningForHost: 5))
        let noMetered = SessionPolicy(allowMetered: false)
        #expect(!noMetered.mayStart(metered: true, powerSaver: false, runningForHost: 0))
        #expect(noMetered.mayStart(metered: false, powerSaver: true, runningForHost: 0))
        let discretionary = SessionPolicy(discretionary: true)
        #expect(!discretionary.mayStart(metered: true, powerSaver: false, runningForHost: 0))
        #expect(!discretionary.mayStart(metered: false, powerSaver: true, runningForHost: 0))
        #expect(discretionary.mayStart(metered: false, powerSaver: false, runningForHost: 0))
        let one = SessionPolicy(perHostLimit: 1)
        #expect(one.mayStart(metered: false, powerSaver: false, runningForHost: 0))
        #expect(!one.mayStart(metered: false, powerSaver: false, runningForHost: 1))
    }

    @Test func schedulerCountsPerSessionAndHost() {
        var s = Scheduler(maxTotal: 6, maxPerHost: 4)
        s.started(host: "h", session: "a")
        s.started(host: "h", session: "b")
        s.started(host: "h", session: "a")
        #expect(s.running(session: "a", host: "h") == 2 && s.running(session: "b", host: "h") == 1)
        s.stopped(host: "h", session: "a")
        #expect(s.running(session: "a", host: "h") == 1 && s.runningByHost["h"] == 2)
    }
}
