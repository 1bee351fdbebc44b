import Testing
@testable import FerryCore

/// The agent's decisions about sessions and what callers see: invalidation, the list and its
/// sections, a full disk, the download folder, reconnecting clients, live views.
extension AgentCoreTests {
    @Test func invalidatingWithCancelEndsWithTheInvalidatedEvent() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let effects = try d.effects(of: .invalidateSession("s", cancelTasks: true))
        #expect(effects.stopped == [id])
        #expect(effects.appended.last == .invalidated(error: nil))
        // EventsAvailable follows on the signals wake: armed by this turn (once, not dropped).
        #expect(effects.contains(.wake(.signals, at: nil)))
        #expect(d.ledger.sessions["s"]?.invalid == true)
        #expect(throws: FerryError.self) { try d.download("http://a/g") }
    }

    @Test func endedTasksLeaveTheListActiveOnesAreRefusedByName() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1"), b = try d.download("http://a/2")
        _ = try d.request(.cancel(a))
        #expect(throws: FerryError(.invalidState, "task \(b) is queued: cancel it before removing it from the list")) {
            try d.request(.removeTasks([a, b]))
        }
        #expect(d.ledger.tasks[a] != nil)   // all or nothing
        let (count, removed) = try d.answer(.clearFinished(session: ""))
        #expect(count == 1)
        #expect(removed.contains(.discardBytes(a)))
        #expect(d.ledger.tasks[a] == nil && d.ledger.tasks[b] != nil)
    }

    @Test func aFullDiskWarnsOncePerTask() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        var popups: [PopupPlan.Outcome] = []
        for _ in 0..<3 {
            try d.wake(.schedule)
            popups += try d.run(.transferCouldNotStart(task: id, .localFailure(errno: 28, message: "disk full"))).popups
            #expect(d.ledger.tasks[id]?.reason == .space)
            d.now = d.ledger.tasks[id]?.retryAt ?? d.now
            try d.wake(.retry)
        }
        #expect(popups.count == 1)
    }

    @Test func shownRecordsAreLiveWhileRunning() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 100)))
        try d.run(.progressed(task: id, received: 42))
        #expect(try d.request(.getTask(id)).received == 42)
        #expect(try d.request(.status).running == 1)
    }

    @Test func theFerrydFolderWinsOverTheSessionsAndTheSessionsOverTheUsers() throws {
        func finalizeDirectory(ferryd: String?, session: String?) throws -> String?? {
            var settings = AgentCore.Settings(stateDirectory: "/state")
            settings.downloadDirectory = ferryd
            var d = CoreDriver(settings)
            try d.start()
            var options = SessionOptions()
            options.defaultDirectory = session
            try d.openSession("s", options)
            let id = try d.download("http://a/f")
            try d.wake(.schedule)
            let ended = try d.run(.transferEnded(task: id, received: 0, ok))
            return ended.lazy.compactMap { if case .finalize(_, let dir, _) = $0 { return .some(dir) } else { return nil } }.first
        }
        #expect(try finalizeDirectory(ferryd: "/f", session: "/s") == .some("/f"))
        #expect(try finalizeDirectory(ferryd: nil, session: "/s") == .some("/s"))
        #expect(try finalizeDirectory(ferryd: nil, session: nil) == .some(nil))   // the user's Downloads (the shell asks XDG)
    }

    @Test func aSessionsRequestTimeoutLowersTheStallLimit() throws {
        var d = CoreDriver()
        try d.start()
        var options = SessionOptions()
        options.requestTimeout = 5
        try d.openSession("quick", options)
        try d.openSession("slow")
        let a = try d.download("http://a/1", session: "quick"), b = try d.download("http://b/2", session: "slow")
        var stall: [Int64: Int] = [:]
        for case .startTransfer(let r, _, let seconds, _) in try d.wake(.schedule) { stall[r.id] = seconds }
        #expect(stall == [a: 5, b: 60])
    }

    @Test func aReconnectingClientGetsEveryUnacknowledgedEventAgainInOrder() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("s", peer: ":1.1")
        let ids = try (0..<3).map { try d.download("http://h\($0)/f") }
        try d.wake(.schedule)
        for id in ids { try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 404))) }
        func fetch(_ d: inout CoreDriver, after: UInt64) throws -> [QueuedEvent] {
            try d.request(.fetchEvents(session: "s", after: after, limit: 0)).events
        }
        let first = try fetch(&d, after: 0)
        #expect(first.map(\.task) == ids)
        // The app takes the first event, then dies; it reconnects and sees the other two.
        _ = try d.request(.acknowledgeEvents(session: "s", upTo: first[0].seq))
        try d.run(.peerLeft(":1.1"))
        try d.openSession("s", peer: ":1.2")
        #expect(try fetch(&d, after: 0).map(\.seq) == first.dropFirst().map(\.seq))
        // The same after an agent crash: the store gives the queue back.
        var restarted = CoreDriver(ledger: d.ledger)
        try restarted.start()
        try restarted.openSession("s", peer: ":1.3")
        #expect(try fetch(&restarted, after: 0).map(\.seq) == first.dropFirst().map(\.seq))
        #expect(try fetch(&restarted, after: first[1].seq).map(\.seq) == [first[2].seq])
    }

    @Test func pauseAllAndResumeAllTouchOnlyTheirSessionAndSayHowMany() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("a")
        try d.openSession("b")
        let a = try (0..<3).map { try d.download("http://h\($0)/f", session: "a") }
        let b = try d.download("http://x/f", session: "b")
        try d.wake(.schedule)
        let (count, paused) = try d.answer(.pauseAll(session: "a"))
        #expect(count == 3)
        #expect(Set(paused.stopped) == Set(a))
        #expect(a.allSatisfy { d.ledger.tasks[$0]?.state == .paused })
        #expect(d.shown(b)?.state == .running)
        #expect(try d.request(.pauseAll(session: "a")) == 0)
        #expect(try d.request(.resumeAll(session: "")) == 3)
        #expect(Set(try d.wake(.schedule).started) == Set(a))
    }

    @Test func removedTasksAreSignalled() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        _ = try d.request(.cancel(id))
        #expect(try d.effects(of: .removeTasks([id])).contains(.tasksRemoved([id], app: "")))
    }

    @Test func liveViewsHearProgressOnTheDocksWakeOnlyWhileBytesMove() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1"), b = try d.download("http://a/2")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: a, ResponseHead(status: 200, totalLength: 100)))
        try d.run(.progressed(task: a, received: 10))
        #expect(try d.run(.progressed(task: a, received: 40)).wakes.isEmpty)   // one wake per window
        d.now += LiveChanges.startToldAfter   // (a start's bytes wait with it: StartToldTests)
        let reported = try d.wake(.launcher).compactMap { e -> [TaskProgress]? in
            if case .tasksProgressed(let p, _) = e { return p } else { return nil }
        }
        #expect(reported == [[TaskProgress(task: a, received: 40, expected: 100)]])
        // Nothing moved since: the next wake says nothing (b never received a byte).
        #expect(try !d.wake(.launcher).contains { if case .tasksProgressed = $0 { return true } else { return false } })
        _ = b
    }

    @Test func aRunningTasksNewSizeReachesViewsOnTheProgressWake() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f.bin")
        try d.wake(.schedule)
        d.now += LiveChanges.startToldAfter
        #expect(try d.wake(.launcher).contains(.taskChanged(id, .running, app: "")))   // its start (StartToldTests)
        // The headers bring a size and a name, not a state: no signal of its own now...
        let headers = try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))
        #expect(!headers.contains { if case .taskChanged = $0 { return true } else { return false } })
        #expect(d.ledger.tasks[id]?.expected == 10)   // (stored at once all the same)
        // ...but with the bytes on the progress wake.
        #expect(try d.wake(.launcher).contains(.taskChanged(id, .running, app: "")))
    }

    @Test func sectionsListActiveOldestFirstAndEndedNewestFirst() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let ids = try (0..<5).map { try d.download("http://a/\($0)") }
        _ = try d.request(.cancel(ids[1]))
        _ = try d.request(.cancel(ids[3]))
        func section(_ active: Bool, _ offset: Int, _ limit: Int) throws -> [Int64] {
            try d.request(.listSection(session: "", active: active, offset: offset, limit: limit)).map(\.id)
        }
        #expect(try section(true, 0, 10) == [ids[0], ids[2], ids[4]])
        #expect(try section(true, 1, 1) == [ids[2]])
        #expect(try section(false, 0, 10) == [ids[3], ids[1]])
    }
}
