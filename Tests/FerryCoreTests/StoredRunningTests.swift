import Testing

@testable import FerryCore

/// A start writes no row: the store keeps a running task queued, which is what a crash makes of
/// it anyway, and callers see it run (GetTask, GetStatus, lists: memory's figures).
@Suite struct StoredRunningTests {
    let ok = TransferOutcome(curlCode: 0, httpStatus: 200)

    @Test func aStartedTaskIsStoredQueuedAndShownRunning() throws {
        var d = try CoreDriver.started(maxTotal: 4, maxPerHost: 2)
        let ids = try (0..<3).map { try d.download("http://a/\($0)") }
        let start = try d.wake(.schedule)
        #expect(start.started == [ids[0], ids[1]] && start.writes.isEmpty)
        #expect(ids.allSatisfy { d.ledger.tasks[$0]?.state == .queued })
        #expect(try d.request(.status).counts == ["queued": 1, "running": 2])
        let page = try d.request(.listTasks(session: "s", after: 0, limit: 10))
        #expect(page.map(\.state) == [.running, .running, .queued])
        // The end is a full write, from queued as stored: the counts follow.
        try d.run(.transferEnded(task: ids[0], received: 10, ok))
        try d.run(.finalized(task: ids[0], .saved(path: "/dl/0", cleanup: [])))
        #expect(d.ledger.tasks[ids[0]]?.state == .completed)
        #expect(try d.request(.status).counts == ["queued": 1, "running": 1, "completed": 1])
    }

    /// A crash while it runs: the restarted agent finds it queued, with what its head brought,
    /// and resumes it from its staged bytes.
    @Test func aTaskRunningAtACrashIsQueuedAndResumes() throws {
        var d = try CoreDriver.started(maxTotal: 4, maxPerHost: 2)
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 100, etag: "\"v1\"")))
        d.ledger.staged[id] = 40
        var restarted = CoreDriver(ledger: d.ledger)
        try restarted.start()
        try restarted.openSession()
        #expect(d.ledger.tasks[id]?.state == .queued && d.ledger.tasks[id]?.etag == "\"v1\"")
        var resumedAt: Int64?
        for case .startTransfer(let r, let plan, _, _) in try restarted.wake(.schedule) where r.id == id {
            resumedAt = plan.offset
        }
        #expect(resumedAt == 40)
    }
}
