import Testing
@testable import FerryCore

/// earliest-begin: a task waits (reason scheduled) until its time, on one wake, then starts.
@Suite struct StartTimeTests {
    @Test func aScheduledTaskWaitsForItsTimeThenStarts() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let at = d.now + 60_000_000
        var draft = TaskRecord(session: "", url: "http://a/f", host: "a")
        draft.state = .waiting; draft.reason = .scheduled; draft.retryAt = at
        let (ids, created) = try d.answer(.createTasks(session: "s", [draft]))
        let id = try #require(ids.first)
        #expect(created.contains { if case .wake(.retry, let when) = $0 { return when == at } else { return false } })
        #expect(try d.wake(.schedule).started.isEmpty)
        #expect(d.ledger.tasks[id]?.reason == .scheduled)

        d.now = at
        try d.wake(.retry)
        #expect(d.ledger.tasks[id]?.state == .queued)
        #expect(try d.wake(.schedule).started == [id])
    }

    @Test func createdPausedItWaitsOnceResumedAndAResumeThenStartsIt() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        var draft = TaskRecord(session: "", url: "http://a/f", host: "a")
        draft.state = .paused; draft.retryAt = d.now + 60_000_000
        let ids = try d.request(.createTasks(session: "s", [draft]))
        _ = try d.request(.resume(ids[0]))
        #expect(d.ledger.tasks[ids[0]]?.state == .waiting)
        #expect(d.ledger.tasks[ids[0]]?.reason == .scheduled)
        _ = try d.request(.resume(ids[0]))   // "start it now"
        #expect(d.ledger.tasks[ids[0]]?.state == .queued)
    }

    @Test func aSessionsMaxRateIsEachNewTasksUnlessItSetsItsOwn() throws {
        var d = CoreDriver()
        try d.start()
        var options = SessionOptions()
        options.maxRate = 50_000
        try d.openSession("s", options)
        let plain = try d.download("http://a/1")
        var own = TaskRecord(session: "", url: "http://a/2", host: "a")
        own.maxRate = 0   // explicitly none
        let ids = try d.request(.createTasks(session: "s", [own]))
        #expect(d.ledger.tasks[plain]?.maxRate == 50_000)
        #expect(d.ledger.tasks[ids[0]]?.maxRate == 0)
    }
}

/// A task's own limits on retrying: max-attempts and timeout (the CLI's --tries, --timeout).
@Suite struct GivingUpTests {
    let refused = TransferOutcome(curlCode: 7, curlMessage: "Connection refused", httpStatus: 0)

    @Test func afterMaxAttemptsTheTaskFails() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        var draft = TaskRecord(session: "", url: "http://a/f", host: "a")
        draft.maxAttempts = 2
        let ids = try d.request(.createTasks(session: "s", [draft]))
        let id = ids[0]
        try d.wake(.schedule)
        try d.run(.transferEnded(task: id, received: 0, refused))
        #expect(d.ledger.tasks[id]?.state == .waiting)
        d.now = d.ledger.tasks[id]!.retryAt!
        try d.wake(.retry)
        try d.wake(.schedule)
        try d.run(.transferEnded(task: id, received: 0, refused))
        #expect(d.ledger.tasks[id]?.state == .failed)
        #expect(d.ledger.tasks[id]?.errorName == "TooManyAttempts")
        #expect(d.ledger.tasks[id]?.error?.hasPrefix("gave up after 2 attempts") == true)
    }

    @Test func pastItsTimeoutTheTaskFails() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        var draft = TaskRecord(session: "", url: "http://a/f", host: "a")
        draft.deadline = 500_000   // half a second from creation (the decoder's relative value)
        let ids = try d.request(.createTasks(session: "s", [draft]))
        #expect(d.ledger.tasks[ids[0]]?.deadline == d.now + 500_000)
        try d.wake(.schedule)
        try d.run(.transferEnded(task: ids[0], received: 0, refused))   // the first retry is 1 s away
        #expect(d.ledger.tasks[ids[0]]?.errorName == "TimedOut")
    }
}
