import Testing
@testable import FerryCore

/// A download from byte 0 carries the core's `BodyGoAhead`: the transfer thread lets the body
/// begin without waiting for `continueBody` where the core would have let it on, and the core
/// still reads the head (issue 56: a small file's head and end in one batch of reports).
@Suite struct BodyGoAheadTests {
    static let mib: Int64 = 1 << 20
    static let roomy = DiskSpace(available: 100 * mib, total: 1_000 * mib)
    let rule = BodyGoAhead(reserve: SpaceReserve(minimumBytes: 16 * mib, fraction: 0), decodesContent: true)

    @Test func theRuleAllowsWhatTheCoreWouldLetOnAndNothingElse() {
        #expect(rule.allows(ResponseHead(status: 200, totalLength: 10, stagingSpace: Self.roomy)))
        #expect(rule.allows(ResponseHead(status: 206, contentRangeStart: 0, totalLength: 10, stagingSpace: Self.roomy)))
        #expect(rule.allows(ResponseHead(status: 404, stagingSpace: Self.roomy)))  // an error page: the core reads it after
        // A range it did not ask for; an encoded answer curl would decode; the reserve; no measure.
        #expect(!rule.allows(ResponseHead(status: 206, contentRangeStart: 5, totalLength: 10, stagingSpace: Self.roomy)))
        #expect(!rule.allows(ResponseHead(status: 200, contentEncoding: "gzip", stagingSpace: Self.roomy)))
        #expect(BodyGoAhead(reserve: rule.reserve, decodesContent: false)
            .allows(ResponseHead(status: 200, contentEncoding: "gzip", stagingSpace: Self.roomy)))
        #expect(!rule.allows(ResponseHead(status: 200, totalLength: 90 * Self.mib, stagingSpace: Self.roomy)))
        #expect(!rule.allows(ResponseHead(status: 200, totalLength: 10)))
    }

    static func plan(_ effects: [AgentEffect], _ id: Int64) -> TaskMachine.TransferPlan? {
        for e in effects { if case .startTransfer(let r, let plan, _, _) = e, r.id == id { return plan } }
        return nil
    }

    @Test func aDownloadFromByteZeroOfTheHostGetsLeaveAResumeAndASandboxedAppsDoNot() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        let plan = try #require(Self.plan(try d.wake(.schedule), id))
        #expect(plan.goAhead == BodyGoAhead(reserve: d.core.settings.stateReserve, decodesContent: plan.decodesContent))

        // The same task again, resumed from 4 bytes on disk: the core reads the head first.
        _ = try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10, etag: "\"v1\"")))
        d.ledger.staged[id] = 4
        try d.run(.transferEnded(task: id, received: 4, TransferOutcome(curlCode: 56, httpStatus: 200, bytesThisAttempt: 4)))
        d.now += 10_000_000
        try d.wake(.retry)
        let resumed = try #require(Self.plan(try d.wake(.schedule), id))
        #expect(resumed.offset == 4 && resumed.goAhead == nil)

        let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                               writable: ["/home/u/.var/app/org.example.App"])
        let mine = "org.example.App.a"
        _ = try d.request(.openSession(mine, SessionOptions(), peer: ":1.2"), from: app)
        let ids = try d.request(.createTasks(session: mine, [TaskRecord(session: "", url: "http://b/f", host: "b")]), from: app)
        let first = try #require(ids.first)
        let theirs = try #require(Self.plan(try d.wake(.schedule), first))
        #expect(theirs.goAhead == nil)
    }

    @Test func aHeadThatWentAheadIsReadButNotAnsweredAndOneTheCoreRefusesIsStopped() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        var head = ResponseHead(status: 200, totalLength: 10, etag: "\"v1\"", stagingSpace: Self.roomy)
        head.wentAhead = true
        let effects = try d.run(.responseBegan(task: id, head))
        #expect(!effects.contains { if case .continueBody = $0 { true } else { false } })
        #expect(effects.stopped.isEmpty)
        #expect(d.ledger.tasks[id]?.etag == "\"v1\"" && d.ledger.tasks[id]?.expected == 10)

        // A head the core would refuse (a shell that went ahead against the rule): the attempt stops.
        let other = try d.download("http://a/g")
        try d.wake(.schedule)
        var wrong = ResponseHead(status: 206, contentRangeStart: 5, totalLength: 10, stagingSpace: Self.roomy)
        wrong.wentAhead = true
        #expect(try d.run(.responseBegan(task: other, wrong)).stopped == [other])
        #expect(d.ledger.tasks[other]?.state != .running)
    }

    /// The end of an attempt carries its bytes: the app hears them as a progress report would
    /// have told it (the transfer thread sends the end instead of its last count), here of an
    /// attempt cut off after 6 of 10 bytes, which will be retried.
    @Test func theEndsBytesAreHeardAsProgress() throws {
        var d = CoreDriver()
        try d.start()
        var keeping = SessionOptions()
        keeping.keepEvents = true
        try d.openSession("s", keeping)
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        var head = ResponseHead(status: 200, totalLength: 10, stagingSpace: Self.roomy)
        head.wentAhead = true
        try d.run(.responseBegan(task: id, head))
        try d.run(.transferEnded(task: id, received: 6, TransferOutcome(curlCode: 56, httpStatus: 200, bytesThisAttempt: 6)))
        let events = try d.request(.fetchEvents(session: "s", after: 0, limit: 0)).events.map(\.event)
        #expect(events.contains(.progress(received: 6, expected: 10, written: 6)))
        #expect(d.ledger.tasks[id]?.state == .waiting)
    }

    /// A head whose attempt's end came in the same batch (`endedWith`) is no checkpoint of its
    /// own for a small body (the save writes the row); a large one's is written (a crash before
    /// the save resumes it, by the validators), and so is every head that came alone.
    @Test func aSmallBodysHeadThatCameWithItsEndWritesNoRow() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        func checkpoints(_ effects: [AgentEffect]) -> Int {
            effects.writes.count { if case .progress = $0 { true } else { false } }
        }
        let small = try d.download("http://a/s"), large = try d.download("http://b/l"), alone = try d.download("http://c/a")
        try d.wake(.schedule)
        for (id, length, ended) in [(small, Int64(10), Int64?(10)), (large, 2 * Self.mib, 2 * Self.mib), (alone, 10, nil)] {
            var head = ResponseHead(status: 200, totalLength: length, etag: "\"v1\"", stagingSpace: Self.roomy)
            head.wentAhead = true
            head.endedWith = ended
            let effects = try d.run(.responseBegan(task: id, head))
            #expect(checkpoints(effects) == (id == small ? 0 : 1), "\(id): \(effects.writes)")
        }
        #expect(d.ledger.tasks[small]?.etag == nil && d.ledger.tasks[large]?.etag == "\"v1\"")
        // The save writes what the head brought.
        try d.run(.transferEnded(task: small, received: 10, TransferOutcome(curlCode: 0, httpStatus: 200, bytesThisAttempt: 10)))
        try d.run(.finalized(task: small, .saved(path: "/dl/s", cleanup: [])))
        #expect(d.ledger.tasks[small]?.state == .completed && d.ledger.tasks[small]?.etag == "\"v1\"")
    }
}
