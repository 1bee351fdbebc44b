import Testing
@testable import FerryCore

/// The agent's decisions, without processes: requests, scheduling, a task's whole life,
/// events and their numbers, relaunch, the network, and what a refused commit undoes.
@Suite struct AgentCoreTests {
    let ok = TransferOutcome(curlCode: 0, httpStatus: 200)

    @Test func createdTasksStartWithinTheLimitsWhenTheLoopIsIdle() throws {
        var settings = AgentCore.Settings(stateDirectory: "/state")
        settings.maxTotal = 3
        settings.maxPerHost = 2
        var d = CoreDriver(settings)
        try d.start()
        try d.openSession()
        let a = try (0..<3).map { try d.download("http://a/\($0)") }
        let b = try d.download("http://b/x")
        // Nothing starts inside the request: the reply is durable first, then the loop schedules.
        let started = try d.wake(.schedule).started
        #expect(started == [a[0], a[1], b])
        #expect(d.ledger.tasks[a[2]]?.state == .queued)
        #expect(d.ledger.tasks[a[0]]?.state == .running)
    }

    @Test func idsAreNeverReusedAfterRemovalAndRestart() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let first = try d.download("http://a/1")
        _ = try d.request(.cancel(first))
        _ = try d.request(.removeTasks([first]))
        var restarted = CoreDriver(ledger: d.ledger)
        try restarted.start()
        restarted.core.tasks.lastTaskID = max(restarted.core.tasks.lastTaskID, first)   // the store's AUTOINCREMENT remembers
        #expect(try restarted.download("http://a/2") == first + 1)
    }

    @Test func aDownloadsWholeLife() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f.bin")
        #expect(try d.wake(.schedule).started == [id])
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))
        try d.run(.progressed(task: id, received: 10))
        let ended = try d.run(.transferEnded(task: id, received: 10, ok))
        let finalize = ended.contains { if case .finalize(let r, nil, _) = $0 { return r.id == id } else { return false } }
        #expect(finalize)
        // Being saved: it can no longer be paused or canceled.
        #expect(throws: FerryError.self) { try d.request(.pause(id)) }
        let saved = try d.run(.finalized(task: id, .saved(path: "/dl/f.bin", cleanup: [StateFolder("/state").staged(id)])))
        #expect(d.ledger.tasks[id]?.state == .completed)
        #expect(d.ledger.tasks[id]?.file == "/dl/f.bin")
        #expect(saved.appended.contains(.finished(file: "/dl/f.bin", received: 10)))
        #expect(saved.popups == [.completed(file: "/dl/f.bin")])
        #expect(saved.writes.contains(.badge(1)))
        // The staging name goes only after the completion (its effects follow the commit).
        let removeAt = saved.firstIndex(of: .removeFiles([StateFolder("/state").staged(id)], confined: false))
        let persistAt = saved.firstIndex { if case .store(.update(let r)) = $0 { return r.state == .completed } else { return false } }
        #expect(removeAt != nil && persistAt != nil && removeAt! > persistAt!)
        try d.run(.popupActivated(appSession: nil))
        #expect(d.ledger.badge == 0)
    }

    @Test func aBurstOfCompletionsReachesTheDockInOneUpdate() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let ids = try ["a", "b", "c"].map { try d.download("http://\($0)/f") }
        try d.wake(.schedule)
        var effects: [AgentEffect] = []
        for id in ids {
            try d.run(.transferEnded(task: id, received: 1, ok))
            effects += try d.run(.finalized(task: id, .saved(path: "/dl/\(id)", cleanup: [])))
        }
        // Each completion counts on the badge; docks hear of it on one wake, not once per file.
        #expect(d.ledger.badge == 3)
        #expect(!effects.contains(.launcherChanged))
        #expect(try d.wake(.launcher).filter { $0 == .launcherChanged }.count == 1)
    }

    @Test func aStartUsesTheRowTheQueueReadNotAnotherRead() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let ids = try ["a", "b"].map { try d.download("http://\($0)/f") }
        let reads = d.ledger.taskReads
        #expect(Set(try d.wake(.schedule).started) == Set(ids))
        #expect(d.ledger.taskReads == reads)
    }

    /// A running task's row is written again while it runs (its response's size and names came):
    /// those writes leave session, host and state as stored, so the store touches no index for
    /// them; a new state is a full write.
    @Test func aRunningTasksRowIsWrittenWithoutItsKeysUntilItsStateChanges() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f.bin")
        func kinds(_ effects: [AgentEffect]) -> [String] {
            effects.writes.compactMap {
                switch $0 {
                case .update(let r) where r.id == id: return "update \(r.state.rawValue)"
                case .progress(let r) where r.id == id: return "progress"
                default: return nil
                }
            }
        }
        #expect(kinds(try d.wake(.schedule)) == ["update running"])
        #expect(kinds(try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))) == ["progress"])
        #expect(d.ledger.tasks[id]?.expected == 10 && d.ledger.tasks[id]?.state == .running)
        try d.run(.transferEnded(task: id, received: 10, ok))
        #expect(kinds(try d.run(.finalized(task: id, .saved(path: "/dl/f.bin", cleanup: [])))) == ["update completed"])
    }

    @Test func pausedNewTasksAskForNoSchedulingTurn() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        try d.wake(.schedule)   // the start's
        var paused = TaskRecord(session: "", url: "http://a/1", host: "a")
        paused.state = .paused
        let quiet = try d.run(.request(.createTasks(session: "s", [paused])))
        #expect(!quiet.wakes.contains(.schedule))
        let queued = try d.run(.request(.createTasks(session: "s", [TaskRecord(session: "", url: "http://a/2", host: "a")])))
        #expect(queued.wakes.contains(.schedule))
    }

    @Test func aStartLooksForStagedBytesOnlyWhereThereCanBeSome() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1"), b = try d.download("http://b/2")
        for id in [a, b] { d.ledger.tasks[id]?.etag = "\"v1\"" }
        d.ledger.staged[a] = 100   // in the staging folder when the restarted agent looked
        var restarted = CoreDriver(ledger: d.ledger)
        try restarted.start()
        d.ledger.staged[b] = 100   // not there then, and b has not run since: no stat(2) for it
        let offsets = try restarted.wake(.schedule).compactMap { e -> (Int64, Int64)? in
            if case .startTransfer(let r, let plan, _, _) = e { return (r.id, plan.offset) } else { return nil }
        }
        #expect(offsets.first { $0.0 == a }?.1 == 100)
        #expect(offsets.first { $0.0 == b }?.1 == 0)
    }

    /// The core's stall check (curl's speed check woke every transfer once a second): one wake
    /// at the earliest possible stall; a transfer without a byte for its stall time is stopped and
    /// retried from what it kept, one that moves is left alone.
    @Test func aTransferWithoutBytesForItsStallTimeIsStoppedAndRetried() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let quiet = try d.download("http://a/1"), moving = try d.download("http://b/2")
        let started = d.now + 1_000
        let effects = try d.wake(.schedule)
        #expect(Set(effects.started) == [quiet, moving])
        #expect(effects.contains(.wake(.stall, at: started + 60_000_000)))
        d.now += 30_000_000
        try d.run(.progressed(task: moving, received: 4_096))
        d.now = started + 60_000_000
        let check = try d.wake(.stall)
        #expect(check.stopped == [quiet])
        #expect(d.ledger.tasks[quiet]?.state == .waiting && d.ledger.tasks[quiet]?.reason == .retry)
        #expect(d.ledger.tasks[quiet]?.error == "no data for 60 s: the transfer stalled", "a stall of its own, not a curl code")
        #expect(d.ledger.tasks[moving]?.state == .running)
        let movedAt = started + 30_000_000 + 1_000
        #expect(check.contains(.wake(.stall, at: movedAt + 60_000_000)), "the next check: when the moving one could stall")
        d.now = movedAt + 60_000_000
        #expect(try d.wake(.stall).stopped == [moving])
        #expect(try d.wake(.schedule).wakes.contains(.stall) == false, "nothing attached: no stall wake")
    }

    @Test func aTransientFailureRetriesThroughOneWake() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let ended = try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 503)))
        #expect(d.ledger.tasks[id]?.state == .waiting && d.ledger.tasks[id]?.reason == .retry)
        let retryAt = try #require(d.ledger.tasks[id]?.retryAt)
        #expect(ended.contains(.wake(.retry, at: retryAt)))
        d.now = retryAt
        try d.wake(.retry)
        #expect(d.ledger.tasks[id]?.state == .queued)
        #expect(try d.wake(.schedule).started == [id])
    }

    @Test func eventNumbersAreReservedInBlocksAndContinueAfterARestart() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 1_000_000)))
        let progress = try d.run(.progressed(task: id, received: 500))
        #expect(progress.writes.contains(.reserveSeq(session: "s", 1_001)))
        #expect(progress.appended.isEmpty)   // progress is not stored
        // A crash: the restarted agent numbers above anything a client could have seen.
        var again = CoreDriver(ledger: d.ledger)
        try again.start()
        _ = try again.request(.cancel(id))
        guard case .events(let events, _) = try again.request(.fetchEvents(session: "s", after: 0, limit: 0)) else {
            Issue.record("no events"); return
        }
        #expect(events.last?.seq ?? 0 > 1_001)
        #expect(events.contains { $0.event == .completed(error: "canceled", errorName: "Canceled", resumable: false) }
                || events.contains { if case .completed = $0.event { return true } else { return false } })
        // Acknowledged events leave the store.
        _ = try again.request(.acknowledgeEvents(session: "s", upTo: events.last!.seq))
        #expect(d.ledger.events["s", default: []].isEmpty)
    }

    @Test func aRefusedCommitUndoesTheTurnAndTheTaskWaitsForTheStore() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let countBefore = d.core.sessions.queues["s"]?.count
        // The transfer ends and fails for good, but the store cannot commit that.
        let effects = try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 404)), commit: false)
        #expect(effects.appended.count == 1)
        let undo = d.core.commitFailed(now: d.now)
        #expect(d.core.sessions.queues["s"]?.count == countBefore)   // its event is forgotten (its number is not reused)
        let shown = try #require(d.core.liveRecord(id) ?? d.ledger.tasks[id].map { d.core.shown($0) })
        #expect(shown.state == .waiting && shown.reason == .space)
        #expect(undo.contains(.wake(.storeRecheck, at: d.now + d.core.settings.spaceRecheck)))
        // Not started again while the store refuses.
        d.ledger.tasks[id]?.state = .queued
        #expect(try d.wake(.schedule).started.isEmpty)
        d.ledger.tasks[id]?.state = .running
        // The store commits again: the task continues.
        let recheck = try d.wake(.storeRecheck)
        #expect(recheck.writes == [.requeueIfRunning([id])])
        #expect(try d.wake(.schedule).started == [id])
    }

    @Test func aRefusedCommitKeepsARunningTransfer() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        // A pause the store cannot record: the transfer it would stop runs on.
        let effects = try d.run(.request(.pause(id)), commit: false)
        #expect(effects.stopped == [id])
        _ = d.core.commitFailed(now: d.now)
        #expect(d.core.liveRecord(id)?.state == .running)
        #expect(d.core.tasks.attached.contains(id))
        #expect(d.core.tasks.scheduler.running == 1)
    }

    @Test func aRefusedRequestChangesNothing() throws {
        var d = CoreDriver()
        try d.start()
        #expect(throws: FerryError.self) { try d.request(.pause(42)) }
        #expect(throws: FerryError.self) { try d.request(.createTasks(session: "nope", [TaskRecord(session: "", url: "http://a/", host: "a")])) }
        #expect(d.ledger.tasks.isEmpty)
        #expect(d.core.tasks.lastTaskID == 0)
    }

    @Test func theAppIsRelaunchedOnlyWhileEventsWaitAndNobodyListens() throws {
        var d = CoreDriver()
        try d.start()
        var options = SessionOptions()
        options.launchCommand = ["/usr/bin/app"]
        try d.openSession("s", options, peer: ":1.7")
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 404)))
        // Its client is connected: no launch.
        #expect(try d.wake(.signals).launches.isEmpty)
        // The client leaves with the event unacknowledged: launch.
        #expect(try d.run(.peerLeft(":1.7")).launches == ["s"])
        // The app dies without taking its events: wait (backoff), then try again.
        let exited = try d.run(.appExited(session: "s", status: 256))
        #expect(exited.launches.isEmpty)
        #expect(exited.wakes.contains(.relaunch("s")))
        d.now += 10_000_000
        #expect(try d.wake(.relaunch("s")).launches == ["s"])
    }

    @Test func networkFlipRestartsRunningTransfersOnNewConnections() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let lost = try d.run(.networkChanged(NetworkState(available: false)))
        #expect(lost.stopped == [id])
        #expect(lost.contains(.dropConnections))
        #expect(d.ledger.tasks[id]?.state == .queued)
        // A failure to reach the server with no network: wait for it, no retry counted.
        try d.wake(.schedule)
        try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 7, httpStatus: 0)))
        #expect(d.ledger.tasks[id]?.reason == .network)
        #expect(d.ledger.tasks[id]?.attempts == 0)
        try d.run(.networkChanged(NetworkState(available: true)))
        #expect(d.ledger.tasks[id]?.state == .queued)
    }

    @Test func meteredNetworksWaitForSessionsThatRefuseThem() throws {
        var d = CoreDriver()
        try d.start(network: NetworkState(available: true, metered: true))
        var options = SessionOptions()
        options.allowMetered = false
        try d.openSession("s", options)
        _ = try d.download("http://a/f")
        #expect(try d.wake(.schedule).started.isEmpty)
        try d.run(.networkChanged(NetworkState(available: true, metered: false)))
        #expect(try d.wake(.schedule).started.count == 1)
    }

    @Test func invalidatingWithCancelEndsWithTheInvalidatedEvent() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let effects = try d.run(.request(.invalidateSession("s", cancelTasks: true)))
        #expect(effects.stopped == [id])
        #expect(effects.appended.last == .invalidated(error: nil))
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
        let removed = try d.run(.request(.clearFinished(session: "")))
        #expect(removed.contains(.reply(.count(1))))
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
        guard case .task(let r) = try d.request(.getTask(id)) else { Issue.record("no task"); return }
        #expect(r.received == 42)
        guard case .status(_, let running, _) = try d.request(.status) else { Issue.record("no status"); return }
        #expect(running == 1)
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
            guard case .events(let e, _) = try d.request(.fetchEvents(session: "s", after: after, limit: 0)) else { return [] }
            return e
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
        let paused = try d.run(.request(.pauseAll(session: "a")))
        #expect(paused.contains(.reply(.count(3))))
        #expect(Set(paused.stopped) == Set(a))
        #expect(a.allSatisfy { d.ledger.tasks[$0]?.state == .paused })
        #expect(d.ledger.tasks[b]?.state == .running)
        #expect(try d.request(.pauseAll(session: "a")) == .count(0))
        #expect(try d.request(.resumeAll(session: "")) == .count(3))
        #expect(Set(try d.wake(.schedule).started) == Set(a))
    }

    @Test func removedTasksAreSignalled() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        _ = try d.request(.cancel(id))
        #expect(try d.run(.request(.removeTasks([id]))).contains(.tasksRemoved([id], app: "")))
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
        #expect(try d.wake(.schedule).contains(.taskChanged(id, .running, app: "")))   // a new state: at once
        // The headers bring a size and a name, not a state: no signal of its own now...
        let headers = try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))
        #expect(!headers.contains { if case .taskChanged = $0 { return true } else { return false } })
        #expect(d.ledger.tasks[id]?.expected == 10)   // (stored at once all the same)
        // ...but with the bytes on the progress wake.
        #expect(try d.wake(.launcher).contains(.taskChanged(id, .running, app: "")))
        // A file done before that wake costs no signal for its headers: only its end is told.
        let b = try d.download("http://b/g.bin")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: b, ResponseHead(status: 200, totalLength: 1)))
        try d.run(.transferEnded(task: b, received: 1, ok))
        try d.run(.finalized(task: b, .saved(path: "/dl/g.bin", cleanup: [])))
        let wake = try d.wake(.launcher)
        #expect(!wake.contains { if case .taskChanged(b, _, _) = $0 { return true } else { return false } })
    }

    @Test func sectionsListActiveOldestFirstAndEndedNewestFirst() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let ids = try (0..<5).map { try d.download("http://a/\($0)") }
        _ = try d.request(.cancel(ids[1]))
        _ = try d.request(.cancel(ids[3]))
        func section(_ active: Bool, _ offset: Int, _ limit: Int) throws -> [Int64] {
            guard case .tasks(let list) = try d.request(.listSection(session: "", active: active, offset: offset, limit: limit)) else { return [] }
            return list.map(\.id)
        }
        #expect(try section(true, 0, 10) == [ids[0], ids[2], ids[4]])
        #expect(try section(true, 1, 1) == [ids[2]])
        #expect(try section(false, 0, 10) == [ids[3], ids[1]])
    }
}

@Suite struct SandboxAccessTests {
    let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                           writable: ["/home/u/.var/app/org.example.App", "/home/u/Downloads"])

    @Test func flatpakInfoGivesTheIdAndTheFoldersItMayWrite() {
        let info = "[Application]\nname=org.example.App\nruntime=x\n\n[Context]\nfilesystems=xdg-download;xdg-music:ro;~/Notes;!home;/srv/data:create;host-etc;\n"
        let a = SandboxedApp.flatpak(info: info, userHome: "/home/u", userDirs: ["xdg-download": "/home/u/Downloads", "xdg-music": "/home/u/Music"])
        #expect(a?.id == "org.example.App")
        #expect(a?.writable == ["/home/u/.var/app/org.example.App", "/home/u/Downloads", "/home/u/Notes", "/srv/data"])
        #expect(a?.mayWrite("/home/u/Downloads/x") == true && a?.mayWrite("/home/u/DownloadsX") == false && a?.mayWrite("/home/u/Music") == false)
        #expect(SandboxedApp.flatpak(info: "[Application]\nname=../x\n", userHome: "/h", userDirs: [:]) == nil)
        #expect(SandboxedApp.snap(label: "snap.firefox.firefox (enforce)", userHome: "/h")?.writable == ["/h/snap/firefox"])
        #expect(SandboxedApp.snap(label: "unconfined", userHome: "/h") == nil)
    }

    @Test func signalsSayWhichAppTheyAreAbout() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("host")
        _ = try d.request(.sandboxed(app, .openSession("org.example.App.mine", SessionOptions(), peer: ":1.2")))
        let created = try d.run(.request(.createTasks(session: "org.example.App.mine", [TaskRecord(session: "", url: "http://a/1", host: "a")])))
        #expect(created.contains(.taskChanged(1, .queued, app: app.id)))
        let hostCreated = try d.run(.request(.createTasks(session: "host", [TaskRecord(session: "", url: "http://a/2", host: "a")])))
        #expect(hostCreated.contains(.taskChanged(2, .queued, app: "")))
        _ = try d.request(.cancel(1))
        _ = try d.request(.cancel(2))
        let removed = try d.run(.request(.removeTasks([1, 2])))
        #expect(removed.contains(.tasksRemoved([2], app: "")) && removed.contains(.tasksRemoved([1], app: app.id)))
    }

    @Test func aSandboxedAppIsRelaunchedAsItselfUnlessItSaysNo() throws {
        var d = CoreDriver()
        try d.start()
        var quiet = SessionOptions()
        quiet.relaunch = false
        for (session, options) in [("org.example.App.mine", SessionOptions()), ("org.example.App.quiet", quiet)] {
            _ = try d.request(.sandboxed(app, .openSession(session, options, peer: ":1.2")))
            let id = try d.download("http://a/\(session)", session: session)
            try d.wake(.schedule)
            try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 404)))
        }
        #expect(try d.run(.peerLeft(":1.2")).launchTargets == [.app(id: app.id, kind: .flatpak)])
    }

    @Test func anAppSeesOnlyItsOwnSessionsAndTasks() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("host")
        let hostTask = try d.download("http://a/1", session: "host")
        _ = try d.request(.sandboxed(app, .openSession("org.example.App.mine", SessionOptions(), peer: ":1.2")))
        let mineTask = try d.download("http://a/2", session: "org.example.App.mine")
        #expect(d.core.app(ofSession: "org.example.App.mine") == app.id && d.core.app(ofSession: "host") == "")
        func denied(_ r: AgentRequest) -> FerryError.Kind? {
            do { _ = try d.request(.sandboxed(app, r)); return nil } catch let e as FerryError { return e.kind } catch { return nil }
        }
        #expect(denied(.getTask(hostTask)) == .noSuchTask)
        #expect(denied(.cancel(hostTask)) == .noSuchTask)
        #expect(denied(.removeTasks([mineTask, hostTask])) == .noSuchTask)
        #expect(denied(.getTask(mineTask)) == nil)
        #expect(denied(.createTasks(session: "host", [TaskRecord(session: "", url: "http://a/3", host: "a")])) == .accessDenied)
        #expect(denied(.resetBadge) == .accessDenied)
        var launching = SessionOptions()
        launching.launchCommand = ["/bin/true"]
        #expect(denied(.openSession("org.example.App.other", launching, peer: ":1.2")) == .accessDenied)
        guard case .tasks(let listed) = try d.request(.sandboxed(app, .listTasks(session: "", after: 0, limit: 0))) else { Issue.record(); return }
        #expect(listed.map(\.id) == [mineTask])
        guard case .count(let paused) = try d.request(.sandboxed(app, .pauseAll(session: ""))) else { Issue.record(); return }
        #expect(paused == 1 && d.ledger.tasks[hostTask]?.state != .paused)
        // The host keeps seeing everything, and reopening an app's session does not take it over.
        _ = try d.request(.openSession("org.example.App.mine", SessionOptions(), peer: ":1.1"))
        #expect(d.core.app(ofSession: "org.example.App.mine") == app.id)
        guard case .tasks(let all) = try d.request(.listTasks(session: "", after: 0, limit: 0)) else { Issue.record(); return }
        #expect(all.map(\.id) == [hostTask, mineTask])
    }

    /// A session an app opened outside its own namespace before apps were held to it (the CLI's,
    /// say) is the host's again when the host opens it: its tasks never go to that app.
    @Test func theHostTakesBackASquattedSession() throws {
        var d = CoreDriver()
        var squatted = SessionConfig()
        squatted.app = "com.evil.App"
        squatted.appHome = "/home/u/.var/app/com.evil.App"
        d.ledger.sessions["dev.ferry.cli"] = squatted
        try d.start()
        guard case .session(_, let created, _, let inbox) = try d.request(.openSession("dev.ferry.cli", SessionOptions(), peer: ":1.2")) else {
            Issue.record("no session")
            return
        }
        #expect(!created && inbox == StateFolder("/state").inbox("dev.ferry.cli"))
        #expect(d.core.app(ofSession: "dev.ferry.cli") == "" && d.ledger.sessions["dev.ferry.cli"]?.app == "")
    }
}