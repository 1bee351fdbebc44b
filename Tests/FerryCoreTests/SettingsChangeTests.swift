import Testing
@testable import FerryCore

/// The user changes the settings while the agent runs: the core applies them from that turn on.
@Suite struct SettingsChangeTests {
    @Test func moreTransfersStartQueuedOnesFewerCutNone() throws {
        var d = try CoreDriver.started(maxTotal: 1, maxPerHost: 10)
        let ids = try (0..<3).map { try d.download("http://a/\($0)") }
        #expect(try d.wake(.schedule).started == [ids[0]])

        var more = d.core.settings
        more.maxTotal = 3
        let changed = try d.run(.settingsChanged(more))
        #expect(changed.wakes.contains(.schedule))
        #expect(try d.wake(.schedule).started == [ids[1], ids[2]])

        var fewer = more
        fewer.maxTotal = 1
        #expect(try d.run(.settingsChanged(fewer)).stopped.isEmpty)
        let next = try d.download("http://a/3")
        #expect(try d.wake(.schedule).started.isEmpty)
        #expect(d.ledger.tasks[next]?.state == .queued)
    }

    @Test func meteredTurnedOffStopsWhatRunsAndHoldsTheQueue() throws {
        var d = CoreDriver()
        try d.start(network: NetworkState(available: true, metered: true))
        try d.openSession()
        let running = try d.download("http://a/1")
        #expect(try d.wake(.schedule).started == [running])

        var off = d.core.settings
        off.allowMetered = false
        #expect(try d.run(.settingsChanged(off)).stopped == [running])
        #expect(d.ledger.tasks[running]?.state == .queued)
        _ = try d.download("http://b/2")
        #expect(try d.wake(.schedule).started.isEmpty)
        // An unmetered network: everything goes again.
        try d.run(.networkChanged(NetworkState(available: true, metered: false)))
        #expect(try d.wake(.schedule).started.count == 2)
    }

    @Test func theDownloadFolderIsWhereUnaddressedDownloadsGo() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        var s = d.core.settings
        s.downloadFolder = "/home/u/Chosen"
        try d.run(.settingsChanged(s))
        let id = try d.download("http://a/f")
        try d.wake(.schedule)
        let ended = try d.run(.transferEnded(task: id, received: 1, TransferOutcome(curlCode: 0, httpStatus: 200)))
        let folders = ended.compactMap { if case .finalize(_, let dir, _) = $0 { return dir } else { return nil } }
        #expect(folders == ["/home/u/Chosen"])
    }
}
