import Testing
@testable import FerryCore

/// What a commit the store refuses undoes, and what it leaves running; a refused request
/// changes nothing.
@Suite struct RefusedCommitTests {
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
        let shown = try #require(d.core.liveRecord(id) ?? d.ledger.tasks[id].map { d.core.tasks.shown($0) })
        #expect(shown.state == .waiting && shown.reason == .space)
        #expect(undo.contains(.wake(.storeRecheck, at: d.now + d.core.settings.spaceRecheck)))
        // Not started again while the store refuses (the row as the rollback left it: queued, as
        // every running task's).
        d.ledger.tasks[id]?.state = .queued
        #expect(try d.wake(.schedule).started.isEmpty)
        // The store commits again: the task continues, from its row as it is.
        let recheck = try d.wake(.storeRecheck)
        #expect(recheck.writes.isEmpty)
        #expect(try d.wake(.schedule).started == [id])
    }

    @Test func aRefusedCommitKeepsARunningTransfer() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        // A pause the store cannot record: the transfer it would stop runs on.
        let effects = try d.effects(of: .pause(id), commit: false)
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
}
