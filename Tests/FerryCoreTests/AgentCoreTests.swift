import Testing
@testable import FerryCore

/// The agent's decisions, without processes: requests, scheduling, a task's whole life,
/// events and their numbers, relaunch and the network (a refused commit: RefusedCommitTests).
@Suite struct AgentCoreTests {
    let ok = TransferOutcome(curlCode: 0, httpStatus: 200)

    @Test func createdTasksStartWithinTheLimitsWhenTheLoopIsIdle() throws {
        var d = try CoreDriver.started(maxTotal: 3, maxPerHost: 2)
        let a = try (0..<3).map { try d.download("http://a/\($0)") }
        let b = try d.download("http://b/x")
        // Nothing starts inside the request: the reply is durable first, then the loop schedules.
        let started = try d.wake(.schedule).started
        #expect(started == [a[0], a[1], b])
        #expect(d.ledger.tasks[a[2]]?.state == .queued)
        #expect(d.shown(a[0])?.state == .running)
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

    @Test func aTurnThatCompletesManyFilesLogsOneLineOnceItCommits() throws {
        var d = try CoreDriver.started(maxTotal: 6, maxPerHost: 6)
        let ids = try (0..<6).map { try d.download("http://h/\($0)") }
        try d.wake(.schedule)
        for id in ids { try d.run(.transferEnded(task: id, received: 1, ok)) }
        func infoLines(_ effects: [AgentEffect]) -> [String] {
            effects.compactMap { if case .log(.info, let line) = $0 { line } else { nil } }
        }
        // Two files in a turn: a line each, once the turn commits (not while it is open).
        let open = try d.run(.finalized(task: ids[0], .saved(path: "/dl/0", cleanup: [])), commit: false)
        #expect(infoLines(open).isEmpty)
        let two = try d.run(.finalized(task: ids[1], .saved(path: "/dl/1", cleanup: [])))
        #expect(infoLines(two) == ["task \(ids[0]): complete: /dl/0", "task \(ids[1]): complete: /dl/1"])
        // Four in a turn: one line for them.
        var four: [AgentEffect] = []
        for (i, id) in ids.enumerated().dropFirst(2) {
            four += try d.run(.finalized(task: id, .saved(path: "/dl/\(i)", cleanup: [])), commit: i == 5)
        }
        #expect(infoLines(four) == ["4 tasks complete, from task \(ids[2]): /dl/2 to task \(ids[5]): /dl/5"])
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

    /// A start writes no row: the store keeps a running task queued (what a crash makes of it),
    /// while callers see it run. Its row is written again while it runs (its response's size
    /// and names came) without session, host and state, so the store touches no index for
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
        #expect(kinds(try d.wake(.schedule)) == [])
        #expect(d.ledger.tasks[id]?.state == .queued && d.shown(id)?.state == .running)
        #expect(try d.request(.status).counts == ["running": 1])
        #expect(kinds(try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))) == ["progress"])
        #expect(d.ledger.tasks[id]?.expected == 10 && d.ledger.tasks[id]?.state == .queued)
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
        let quiet = try d.effects(of: .createTasks(session: "s", [paused]))
        #expect(!quiet.wakes.contains(.schedule))
        let queued = try d.effects(of: .createTasks(session: "s", [TaskRecord(session: "", url: "http://a/2", host: "a")]))
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
        #expect(d.shown(moving)?.state == .running)
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
        let events = try again.request(.fetchEvents(session: "s", after: 0, limit: 0)).events
        #expect(events.last?.seq ?? 0 > 1_001)
        #expect(events.contains { $0.event == .completed(error: "canceled", errorName: "Canceled", resumable: false) }
                || events.contains { if case .completed = $0.event { return true } else { return false } })
        // Acknowledged events leave the store.
        _ = try again.request(.acknowledgeEvents(session: "s", upTo: events.last!.seq))
        #expect(d.ledger.events["s", default: []].isEmpty)
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
}
