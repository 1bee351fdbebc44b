import Testing
@testable import FerryCore

/// The small machines `AgentCore` is made of, each on its own, and the whole-value rollback
/// of a turn the store refused.
@Suite struct CoreMachinesTests {
    @Test func aWakeIsArmedOnceAndTheEarliestMomentWins() {
        var w = WakePlan()
        #expect(w.arm(.schedule) == .wake(.schedule, at: nil))
        #expect(w.arm(.schedule) == nil)   // armed already: the shell keeps one
        w.fired(.schedule)
        #expect(w.arm(.schedule, at: 5) == .wake(.schedule, at: 5))
        #expect(w.arm(.retry, noLaterThan: 100, due: \.retryDueAt) == .wake(.retry, at: 100))
        #expect(w.arm(.retry, noLaterThan: 200, due: \.retryDueAt) == nil)   // due sooner already
        #expect(w.arm(.retry, noLaterThan: 50, due: \.retryDueAt) == .wake(.retry, at: 50))
        #expect(w.retryDueAt == 50)
    }

    @Test func theUserHearsOfCompletionsFailuresAndFullDisksOnce() {
        var u = UserDelivery()
        let done = u.taskEvent(.finished(file: "/d/a.pdf", received: 1), name: "a.pdf", now: 5)
        // The badge is stored and reaches docks on the launcher wake, 0.1 s on.
        #expect(done == [.popup(.completed(file: "/d/a.pdf")), .store(.badge(1)), .wake(.launcher, at: 100_005)] && u.badge == 1)
        #expect(u.taskEvent(.completed(error: "HTTP 404", errorName: "Failed", resumable: false), name: "b", now: 6)
                == [.popup(.failed(name: "b", reason: "HTTP 404"))])
        #expect(u.taskEvent(.completed(error: "canceled", errorName: "Canceled", resumable: false), name: "c", now: 7).isEmpty)
        #expect(u.noSpace(7, name: "big.iso") == [.popup(.noSpace(name: "big.iso"))])
        #expect(u.noSpace(7, name: "big.iso").isEmpty)
        #expect(u.resetBadge(now: 8) == [.store(.badge(0)), .wake(.launcher, at: 100_008)] && u.resetBadge(now: 9).isEmpty)
        // A click on a sandboxed app's popup starts the app as itself; a host popup only resets.
        var app = SessionConfig()
        app.app = "org.example.App"
        _ = u.taskEvent(.finished(file: "/d/b.pdf", received: 1), name: "b.pdf", now: 10)
        #expect(u.popupActivated("org.example.App", config: app, now: 11)
                == [.store(.badge(0)), .wake(.launcher, at: 100_011), .launch(session: "org.example.App", .app(id: "org.example.App", kind: .flatpak))])
        #expect(u.popupActivated(nil, config: nil, now: 12).isEmpty)
    }

    @Test func progressIsReportedPerAppOnce() {
        let u = UserDelivery()
        let changes = LiveChanges(progressMoved: [1, 2], rowsChanged: [2])
        let records: [Int64: TaskRecord] = [1: { var r = TaskRecord(session: "host", url: "http://a/1", host: "a"); r.id = 1; r.received = 10; return r }(),
                                            2: { var r = TaskRecord(session: "app", url: "http://a/2", host: "a"); r.id = 2; r.state = .running; return r }()]
        let out = u.report(changes, record: { records[$0] }, app: { $0 == "app" ? "org.example.App" : "" })
        #expect(out == [.taskChanged(2, .running, app: "org.example.App"),
                        .tasksProgressed([TaskProgress(task: 1, received: 10, expected: -1)], app: ""),
                        .tasksProgressed([TaskProgress(task: 2, received: 0, expected: -1)], app: "org.example.App")])
        #expect(u.report(LiveChanges(), record: { records[$0] }, app: { _ in "" }).isEmpty)
    }

    @Test func sessionsQueueEventsReserveNumbersAndRelaunchWhenNobodyListens() throws {
        var book = SessionBook()
        var config = SessionConfig()
        config.launchCommand = ["/usr/bin/app"]
        book.configs["s"] = config
        let first = book.append(session: "s", task: 1, .finished(file: "/f", received: 1))
        #expect(first.count == 3 && first.contains(.wake(.signals, at: nil)) && book.reservedSeq["s"] == 1_001 && book.signalsPending == ["s"])
        #expect(book.append(session: "s", task: 1, .progress(received: 1, expected: nil, written: 1)) == [.wake(.signals, at: nil)])   // not stored
        book.clients["s"] = [":1.5"]
        #expect(book.considerLaunch("s", now: 0).isEmpty)   // its client takes them
        // The client leaves: the app is started for its events.
        #expect(book.peerLeft(":1.5", now: 0) == [.launch(session: "s", .command(["/usr/bin/app"]))])
        #expect(book.considerLaunch("s", now: 1).isEmpty)   // launched: not again while it runs
        // It exits with the events still there: a warning, and a wake for the backoff's end.
        let exited = book.appExited("s", status: 1, now: 1_000_000)
        guard case .log(.warning, let note)? = exited.first, case .wake(.relaunch("s"), let at?)? = exited.last else {
            Issue.record("\(exited)"); return
        }
        #expect(note.contains("status 1") && at > 1_000_000)
        #expect(book.considerLaunch("s", now: at) == [.launch(session: "s", .command(["/usr/bin/app"]))])
        #expect(try book.acknowledge("s", upTo: 2, confined: false) == [.store(.deleteEvents(session: "s", upTo: 2))])
        #expect(throws: FerryError.self) { try book.acknowledge("s", upTo: 99, confined: false) }
        #expect(throws: FerryError.self) { try book.acknowledge("nope", upTo: 1, confined: false) }
    }

    @Test func runningTasksTakeAndGiveBackSlotsAndStall() {
        var t = RunningTasks(maxTotal: 2, maxPerHost: 1)
        var r = TaskRecord(session: "s", url: "http://a/1", host: "a")
        r.id = 1
        t.machines[1] = TaskMachine(r)
        t.attach(r, stall: StallWatch(lastMoved: 0, limit: 10, offset: 0))
        #expect(t.scheduler.running == 1 && !t.scheduler.mayStart(host: "a"))
        #expect(t.stalls(now: 5, defaultLimit: 10).next == 10)
        #expect(t.stalls(now: 10, defaultLimit: 10).stalled.map(\.0) == [1])
        #expect(t.detach(1)?.id == 1 && t.scheduler.running == 0 && t.detach(1) == nil)
        t.storeBlocked = [1]
        t.machines[1] = nil
        #expect(t.shown(r).state == .waiting && t.shown(r).reason == .space)
    }

    /// A refused commit puts every part of memory back, credentials and badge included; a new
    /// field of a machine needs no line of its own for it.
    @Test func aRefusedCommitRestoresTheWholeValue() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 22, httpStatus: 401, authenticate: "Basic realm=x")))
        try d.run(.credentialFound(task: id, nil))   // the keyring had none: the app was asked
        d.core.user.badge = 3   // three completions the user has not looked at
        let before = d.core
        _ = try d.effects(of: .answerChallenge(id, .credential(Credential(user: "u", password: "p"))), commit: false)
        _ = try d.run(.popupActivated(appSession: nil), commit: false)   // the badge reset, not recorded
        #expect(d.core.user.badge == 0)
        _ = d.core.commitFailed(now: d.now)
        #expect(d.core.credentials.byTask.isEmpty && d.core.user == before.user)
        #expect(d.core.sessions.configs == before.sessions.configs && d.core.tasks.lastTaskID == before.tasks.lastTaskID)
        #expect(d.core.turnStart == nil)
    }
}

/// The body of a response is the core's to decide: the transfer waits, paused before its first
/// byte, for `continueBody`.
@Suite struct BodyDecisionTests {
    @Test func theCoreDecidesAppendRestartOrReject() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        #expect(try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10, etag: "\"v1\""))).contains(.continueBody(id, .restartFromZero)))
        d.ledger.staged[id] = 4
        try d.run(.transferEnded(task: id, received: 4, TransferOutcome(curlCode: 56, httpStatus: 200, bytesThisAttempt: 4)))
        d.now += 10_000_000
        try d.wake(.retry)
        #expect(try d.wake(.schedule).started == [id])
        let resumed = try d.run(.responseBegan(task: id, ResponseHead(status: 206, contentRangeStart: 4, totalLength: 10)))
        #expect(resumed.contains(.continueBody(id, .append)))
        let wrong = try d.run(.responseBegan(task: id, ResponseHead(status: 206, contentRangeStart: 2, totalLength: 10)))
        #expect(wrong.contains { if case .continueBody(id, .reject) = $0 { true } else { false } })
    }
}

/// A stall is an outcome of its own: retried, and a reason to wait for the network when the
/// attempt never reached its server, whatever curl's codes are.
@Suite struct StallOutcomeTests {
    @Test func aStallIsTransientAndSaysSo() {
        let stalled = TransferOutcome.stalled(seconds: 60, bytesThisAttempt: 0)
        #expect(stalled.curlCode == 0 && stalled.stalledSeconds == 60)
        #expect(FailureClassifier.classify(stalled) == .transient("no data for 60 s: the transfer stalled"))
        #expect(stalled.neverReachedServer)
        #expect(!TransferOutcome.stalled(seconds: 60, bytesThisAttempt: 10).neverReachedServer)
    }
}
