import Testing
@testable import FerryCore

/// A start is told (TaskChanged running) once the task has run for half a second, on the progress
/// wake: a small file done sooner is told only by its end, a signal a file less.
@Suite struct StartToldTests {
    let ok = TransferOutcome(curlCode: 0, httpStatus: 200)

    func isChanged(_ id: Int64) -> (AgentEffect) -> Bool {
        { if case .taskChanged(id, _, _) = $0 { return true } else { return false } }
    }

    @Test func aStartIsToldOnceItHasRunForHalfASecond() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f.bin")
        let startedAt = d.now
        let started = try d.wake(.schedule)
        #expect(started.started == [id])
        #expect(!started.contains(where: isChanged(id)))
        let dueAt = try #require(started.lazy.compactMap { if case .wake(.launcher, let at) = $0 { at } else { nil } }.first)
        #expect(dueAt >= startedAt + LiveChanges.startToldAfter && dueAt < startedAt + LiveChanges.startToldAfter + 10_000)
        // Its bytes and headers wait with it: a view hears "running" before them.
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 10)))
        try d.run(.progressed(task: id, received: 4))
        // An earlier wake (another file's badge) tells nothing of it and comes again when it is due.
        d.now = startedAt + 100_000
        let early = try d.wake(.launcher)
        #expect(!early.contains(where: isChanged(id)))
        #expect(!early.contains { if case .tasksProgressed = $0 { return true } else { return false } })
        #expect(early.contains(.wake(.launcher, at: dueAt)))
        d.now = dueAt
        let due = try d.wake(.launcher)
        #expect(due.contains(.taskChanged(id, .running, app: "")))
        #expect(due.contains(.tasksProgressed([TaskProgress(task: id, received: 4, expected: 10)], app: "")))
        // Told once: nothing waits, no wake is armed for it.
        d.now += 100_000
        let after = try d.wake(.launcher)
        #expect(!after.contains(where: isChanged(id)))
        #expect(!after.contains { if case .wake(.launcher, _) = $0 { return true } else { return false } })
    }

    @Test func aFileDoneSoonerIsToldOnlyByItsEnd() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://b/g.bin")
        try d.wake(.schedule)
        try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 1)))
        try d.run(.transferEnded(task: id, received: 1, ok))
        let saved = try d.run(.finalized(task: id, .saved(path: "/dl/g.bin", cleanup: [])))
        #expect(saved.filter(isChanged(id)) == [.taskChanged(id, .completed, app: "")])
        d.now += LiveChanges.startToldAfter
        let wake = try d.wake(.launcher)
        #expect(!wake.contains(where: isChanged(id)))
        // Nothing waits: an idle agent arms no wake for it.
        #expect(!wake.contains { if case .wake(.launcher, _) = $0 { return true } else { return false } })
    }

    @Test func aStartThatEndsInAnotherStateIsToldByThatState() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/f.bin")
        try d.wake(.schedule)
        let paused = try d.effects(of: .pause(id))
        #expect(paused.filter(isChanged(id)) == [.taskChanged(id, .paused, app: "")])
        d.now += LiveChanges.startToldAfter
        #expect(!(try d.wake(.launcher)).contains(where: isChanged(id)))
    }
}
