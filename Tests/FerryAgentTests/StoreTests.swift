import FerryCore
import Foundation
import Testing
@testable import FerryAgent

/// The store on its own: which turns wait for the disk.
@Suite struct StoreTests {
    @Test func aTurnWaitsForTheDiskUnlessItOnlyCheckpointsRunningTasks() throws {
        let dir = NSTemporaryDirectory() + "ferry-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(path: dir + "/ferry.sqlite3")
        var r = TaskRecord(id: 1, session: "s", url: "http://a/f", host: "a")
        let start = store.logSyncs
        try store.batch { try store.apply(.insert([r]), now: 1) }
        #expect(store.logSyncs == start + 1, "a new task is durable before its reply")
        r.state = .running
        try store.batch { try store.apply(.update(r), now: 2) }
        r.received = 4_096
        try store.batch { try store.apply(.update(r), now: 3) }
        #expect(store.logSyncs == start + 1, "a running task's checkpoints do not wait for the disk")
        var other = r
        other.id = 2
        other.state = .queued
        try store.batch {
            try store.apply(.update(r), now: 4)
            try store.apply(.insert([other]), now: 4)
        }
        #expect(store.logSyncs == start + 2, "a turn with anything more waits")
        r.state = .completed
        try store.batch { try store.apply(.update(r), now: 5) }
        #expect(store.logSyncs == start + 3, "a completion is durable before it is reported")
        #expect(try store.task(1)?.state == .completed && store.task(2)?.state == .queued)
    }
}
