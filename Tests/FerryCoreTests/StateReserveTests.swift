import Testing
@testable import FerryCore

/// The state disk's reserve is the core's to keep: the shell measures the free space (at a
/// response's head, then every few MiB of a body of no announced length) and the core stops a
/// download that would take the reserve, which then waits for space from its bytes.
@Suite struct StateReserveTests {
    static let mib: Int64 = 1 << 20

    /// A driver whose reserve is 16 MiB, with one download started.
    static func started() throws -> (CoreDriver, Int64) {
        var settings = AgentCore.Settings(stateDirectory: "/state")
        settings.stateReserve = SpaceReserve(minimumBytes: 16 * mib, fraction: 0)
        var d = CoreDriver(settings)
        try d.start()
        try d.openSession()
        let id = try d.download("http://a/big.iso")
        #expect(try d.wake(.schedule).started == [id])
        return (d, id)
    }

    @Test func aHeadWhoseLengthWouldTakeTheReserveStopsBeforeAByteAndWaitsForSpace() throws {
        var (d, id) = try Self.started()
        let space = DiskSpace(available: 40 * Self.mib, total: 1_000 * Self.mib)
        // 30 MiB announced, 40 free: 10 would be left, the reserve is 16.
        let effects = try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 30 * Self.mib, stagingSpace: space)))
        #expect(effects.stopped == [id])
        #expect(!effects.contains { if case .continueBody = $0 { true } else { false } })
        #expect(d.ledger.tasks[id]?.state == .waiting && d.ledger.tasks[id]?.reason == .space)
        #expect(d.ledger.tasks[id]?.error?.contains("state folder is nearly full") == true)
    }

    @Test func aHeadThatLeavesTheReserveGoesOn() throws {
        var (d, id) = try Self.started()
        let space = DiskSpace(available: 40 * Self.mib, total: 1_000 * Self.mib)
        #expect(try d.run(.responseBegan(task: id, ResponseHead(status: 200, totalLength: 20 * Self.mib, stagingSpace: space)))
            .contains(.continueBody(id, .restartFromZero)))
        // No space measured (an upload, or a disk that cannot say): nothing to keep.
        var (e, other) = try Self.started()
        #expect(try e.run(.responseBegan(task: other, ResponseHead(status: 200, totalLength: 900 * Self.mib)))
            .contains(.continueBody(other, .restartFromZero)))
    }

    @Test func aBodyOfNoLengthStopsWhenTheDiskComesDownToTheReserve() throws {
        var (d, id) = try Self.started()
        let roomy = DiskSpace(available: 100 * Self.mib, total: 1_000 * Self.mib)
        #expect(try d.run(.responseBegan(task: id, ResponseHead(status: 200, stagingSpace: roomy))).contains(.continueBody(id, .restartFromZero)))
        #expect(try d.run(.stagingSpace(task: id, received: 8 * Self.mib, roomy)).stopped.isEmpty)
        let full = DiskSpace(available: 15 * Self.mib, total: 1_000 * Self.mib)
        let effects = try d.run(.stagingSpace(task: id, received: 12 * Self.mib, full))
        #expect(effects.stopped == [id])
        #expect(d.ledger.tasks[id]?.state == .waiting && d.ledger.tasks[id]?.reason == .space)
        #expect(d.ledger.tasks[id]?.received == 12 * Self.mib)   // its bytes are kept
    }

    /// A sandboxed app holds at most half of what staging may use (issue 54, item 7): what it
    /// holds counts back in, so its share does not shrink as it fills the disk.
    @Test func anAppsShareIsHalfOfWhatStagingMayUse() {
        let r = SpaceReserve(minimumBytes: 2 * Self.mib, fraction: 0.01)
        let disk = DiskSpace(available: 22 * Self.mib, total: 24 * Self.mib)
        #expect(r.appShare(holding: 0, disk) == 10 * Self.mib)
        #expect(r.appRefusal(app: "A", holding: 0, more: 6 * Self.mib, disk) == nil)
        let later = DiskSpace(available: 16 * Self.mib, total: 24 * Self.mib)  // 6 MiB of it the app's
        #expect(r.appShare(holding: 6 * Self.mib, later) == 10 * Self.mib)
        #expect(r.appRefusal(app: "A", holding: 6 * Self.mib, more: 6 * Self.mib, later)?.contains("A's downloads hold 6 MiB") == true)
    }
}
