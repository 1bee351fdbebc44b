import FerryCore
import Testing

@testable import FerryAgent

/// The store keeps a running task queued (a start writes no row): the reads that meet such rows
/// leave the running ones out by the ids the core gives them, in SQL.
@Suite struct StoredRunningTests {
    @Test func theQueueAndTheStagedBytesLeaveOutTheTasksThatRun() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        let records = (1...40).map { i -> TaskRecord in
            var r = TaskRecord(id: Int64(i), session: "s", url: "http://a/\(i)", host: "a")
            r.received = 100
            return r
        }
        try store.batch { try store.apply(.insert(records), now: 1) }
        let running = Set<Int64>(1...16)
        let pagesBefore = store.queuePagesRead
        let next = try store.nextQueued(limit: 4, excludingHosts: [], excludingIDs: running) { _ in .take }
        #expect(next.map(\.id) == [17, 18, 19, 20])
        #expect(store.queuePagesRead == pagesBefore + 1, "the running ones take no room in the page")
        #expect(store.queueRowsDecoded == 4, "the page's rows past the four wanted are not decoded")
        #expect(try store.heldInStaging(sessions: ["s"], excluding: []) == 4_000)
        #expect(try store.heldInStaging(sessions: ["s"], excluding: running) == 2_400)
    }
}
