import CSQLite
import FerryCore
import Foundation
import Testing
@testable import FerryAgent

/// The store on its own: which turns wait for the disk.
@Suite struct StoreTests {
    @Test func aTurnWaitsForTheDiskUnlessItOnlyCheckpointsRunningTasks() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
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

    /// In the agent a durable turn's sync is handed on (to the outbox, ahead of the turn's
    /// messages) instead of waited for; one sync covers every commit noted before it.
    @Test func aDurableTurnsSyncIsHandedOnAndCoversEarlierCommits() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        var handedOn = 0
        store.syncLater = { handedOn += 1 }
        var r = TaskRecord(id: 1, session: "s", url: "http://a/f", host: "a")
        let disk = store.logSync.diskSyncs
        try store.batch { try store.apply(.insert([r]), now: 1) }
        #expect(handedOn == 1 && store.lastBatchAwaitsSync, "a new task's sync is handed on")
        #expect(store.logSync.diskSyncs == disk, "and not made on the loop")
        r.state = .running
        try store.batch { try store.apply(.update(r), now: 2) }
        #expect(handedOn == 1 && !store.lastBatchAwaitsSync, "a checkpoint needs none")
        r.state = .completed
        try store.batch { try store.apply(.update(r), now: 3) }
        #expect(handedOn == 2)
        // The two syncs handed on: the first covers both commits, the second finds nothing to do.
        try store.logSync.sync()
        try store.logSync.sync()
        #expect(store.logSync.diskSyncs == disk + 1)
        r.received = 1
        try store.batch { try store.apply(.update(r), now: 4) }
        try store.logSync.sync()
        #expect(store.logSync.diskSyncs == disk + 2, "a later commit gets a sync of its own")
    }

    /// A running task's progress is written without its keys: the row changes, the state (and
    /// with it the counts and the queue) stays as stored.
    @Test func progressLeavesStateSessionAndHostAsStored() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        var r = TaskRecord(id: 1, session: "s", url: "http://a/f", host: "a")
        r.state = .running
        try store.batch { try store.apply(.insert([r]), now: 1) }
        var moved = r
        moved.received = 4_096
        moved.etag = "\"x\""
        moved.state = .queued   // not how the core uses it: shows what the write leaves alone
        moved.host = "elsewhere"
        let syncs = store.logSyncs
        try store.batch { try store.apply(.progress(moved), now: 2) }
        let stored = try #require(try store.task(1))
        #expect(stored.received == 4_096 && stored.etag == "\"x\"")
        #expect(stored.state == .running && stored.host == "a" && stored.session == "s")
        #expect(try store.countsByState(sessions: nil)["running"] == 1)
        #expect(store.logSyncs == syncs, "a checkpoint: no wait for the disk")
        // A full write sets the state (and host) but never the session, fixed when a task is made.
        var done = stored
        done.state = .completed
        done.session = "other"
        try store.batch { try store.apply(.update(done), now: 3) }
        #expect(try store.task(1)?.state == .completed && store.task(1)?.session == "s")
        #expect(try store.countsByState(sessions: nil)["running"] == 0 && store.countsByState(sessions: nil)["completed"] == 1)
    }

    /// A batch is written several rows a statement: every task reads back as it was given, field
    /// for field, whether it went in with 31 others or alone (a batch of 70: two statements of 32
    /// rows, six of one).
    @Test func aBatchIsStoredRowForRow() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        let records = (1...70).map { i -> TaskRecord in
            var r = TaskRecord(id: Int64(i), session: "s\(i % 4)", url: "http://h\(i % 5)/f\(i)", host: "h\(i % 5)",
                               state: i % 3 == 0 ? .paused : .queued, expected: i % 2 == 0 ? Int64(i * 1_000) : nil,
                               etag: "\"e\(i)\"", directory: i % 7 == 0 ? "/tmp/d\(i)" : nil, sha256: i % 5 == 0 ? "ab\(i)" : nil,
                               description: "task \(i)", headers: i % 6 == 0 ? ["X-N": "\(i)"] : [:],
                               attempts: i % 4, created: Int64(i), updated: Int64(i + 1))
            r.kind = i % 9 == 0 ? .upload : .download
            r.method = i % 9 == 0 ? "PUT" : nil
            r.uploadFile = i % 9 == 0 ? "/tmp/u\(i)" : nil
            r.priority = Double(i % 11) / 10
            r.maxRate = i % 8 == 0 ? Int64(i * 1_024) : nil
            return r
        }
        try store.batch { try store.apply(.insert(records), now: 1) }
        for r in records { #expect(try store.task(r.id) == r, "task \(r.id)") }
    }

    /// What GetStatus and the scheduler read instead of counting (`task_counts`, `queued_hosts`)
    /// equals counting the table, whichever way tasks came (batches of mixed states and hosts,
    /// one at a time), changed and went.
    @Test func keptCountsEqualCountingTheTable() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        let states: [TaskState] = [.queued, .paused, .queued, .waiting, .queued]
        let records = (1...80).map { i in
            var r = TaskRecord(id: Int64(i), session: "s", url: "http://h/\(i)", host: ["a", "b", "c"][i % 3])
            r.state = states[i % states.count]
            return r
        }
        func matches() throws -> Bool {
            try store.read { db in
                func pairs(_ sql: String) throws -> [String: Int64] {
                    var out: [String: Int64] = [:]
                    try db.prepare(sql).rows { out[$0.text(0)] = $0.int(1) }
                    return out
                }
                let counted = try pairs("SELECT state, COUNT(*) FROM tasks GROUP BY state")
                let kept = try pairs("SELECT state, n FROM task_counts WHERE n != 0")
                let queued = try pairs("SELECT host, COUNT(*) FROM tasks WHERE state = 'queued' GROUP BY host")
                let keptQueued = try pairs("SELECT host, n FROM queued_hosts WHERE n != 0")
                return counted == kept && queued == keptQueued && !counted.isEmpty
            }
        }
        try store.batch { try store.apply(.insert(Array(records[0..<65])), now: 1) }
        #expect(try matches(), "a batch")
        try store.batch { try store.apply(.insert([records[65]]), now: 2) }
        try store.batch {
            try store.apply(.insert(Array(records[66..<73])), now: 3)
            try store.apply(.insert(Array(records[73...])), now: 3)
        }
        #expect(try matches(), "one task, then two batches in one transaction")
        var moved = records[2]
        moved.state = .running
        try store.batch { try store.apply(.update(moved), now: 4) }
        try store.batch { try store.apply(.deleteTasks([1, 4, 7]), now: 5) }
        #expect(try matches(), "after a change and deletions")
    }

    /// The schema's migrations run once: a store opened again (by a later agent) keeps its rows.
    @Test func aStoreOpenedAgainKeepsItsRowsAndRunsNoMigrationTwice() throws {
        let folder = try StoreFolder()
        do {
            let store = try folder.open()
            try store.batch { try store.apply(.insert([TaskRecord(id: 7, session: "s", url: "http://a/f", host: "a")]), now: 1) }
        }
        let again = try folder.open()
        #expect(try again.task(7)?.url == "http://a/f")
        #expect(try again.read { try $0.prepare("SELECT identifier FROM grdb_migrations").texts() } == Store.migrations.map(\.0))
    }

    /// The scheduler's shortcut: queued tasks counted per host as tasks change.
    @Test func queuedTasksAreCountedPerHostAndAFullHostIsNotScanned() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        func counts() throws -> [String: Int] {
            try store.read { db in
                var out: [String: Int] = [:]
                try db.prepare("SELECT host, n FROM queued_hosts WHERE n > 0").rows { out[$0.text(0)] = Int($0.int(1)) }
                return out
            }
        }
        let records = (1...5).map { TaskRecord(id: Int64($0), session: "s", url: "http://h/\($0)", host: $0 <= 3 ? "a" : "b") }
        try store.batch { try store.apply(.insert(records), now: 1) }
        #expect(try counts() == ["a": 3, "b": 2])
        var r = records[0]
        r.state = .running
        try store.batch { try store.apply(.update(r), now: 2) }
        r.state = .queued
        r.host = "c"
        try store.batch { try store.apply(.update(records[3]), now: 3) }   // queued stays queued
        try store.batch { try store.apply(.update(r), now: 3) }
        try store.batch { try store.apply(.deleteTasks([5]), now: 4) }
        #expect(try counts() == ["a": 2, "b": 1, "c": 1])
        // Hosts a, b and c full: nothing is read; one free: its first task.
        #expect(try store.nextQueued(limit: 4, excludingHosts: ["a", "b", "c"], excludingIDs: []) { _ in .take }.isEmpty)
        #expect(try store.nextQueued(limit: 4, excludingHosts: ["a", "c"], excludingIDs: []) { _ in .take }.map(\.id) == [4])
    }

    /// A host filled while the queue is read (two transfers a host, one slot free): when no
    /// other host has queued tasks, the read stops there instead of scanning that host's queue.
    @Test func aHostFilledWhileReadingEndsTheReadWhenNoOtherHostWaits() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        let records = (1...300).map { TaskRecord(id: Int64($0), session: "s", url: "http://a/\($0)", host: $0 == 300 ? "b" : "a") }
        try store.batch { try store.apply(.insert(Array(records.dropLast())), now: 1) }
        var room = 1   // host a has room for one more
        func pick(_ r: TaskRecord) -> QueuePick {
            guard r.host == "a" else { return .take }
            if room > 0 { room -= 1; return .take }
            return .skipHost
        }
        let before = store.queuePagesRead
        #expect(try store.nextQueued(limit: 5, excludingHosts: [], excludingIDs: [], take: pick).map(\.id) == [1])
        #expect(store.queuePagesRead == before + 1, "no second page: only host a has queued tasks")
        // With a task queued for another host, the read goes on and finds it.
        try store.batch { try store.apply(.insert([records[299]]), now: 2) }
        room = 1
        #expect(try store.nextQueued(limit: 5, excludingHosts: [], excludingIDs: [], take: pick).map(\.id) == [1, 300])
    }
}

extension StoreTests {
    /// The queue is read by priority (highest first), then age, across pages and with a busy
    /// host left out.
    @Test func theQueueIsReadByPriorityThenAge() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        let records = (1...600).map { i -> TaskRecord in
            var r = TaskRecord(id: Int64(i), session: "s", url: "http://h/\(i)", host: i % 2 == 0 ? "even" : "odd")
            r.priority = [0.5, 0.9, 0.1][i % 3]
            return r
        }
        try store.batch { try store.apply(.insert(records), now: 1) }
        let all = try store.nextQueued(limit: 600, excludingHosts: [], excludingIDs: []) { _ in .take }.map(\.id)
        let expected = records.sorted { ($1.priority, $0.id) < ($0.priority, $1.id) }.map(\.id)
        #expect(all == expected)
        #expect(all.prefix(3) == [1, 4, 7])   // 0.9 first, oldest first
        // Host "odd" full after its first: the rest come from "even", still by priority.
        var oddLeft = 1
        let picked = try store.nextQueued(limit: 4, excludingHosts: [], excludingIDs: []) { r in
            if r.host == "odd" { if oddLeft > 0 { oddLeft -= 1; return .take }; return .skipHost }
            return .take
        }.map(\.id)
        #expect(picked == [1, 4, 10, 16])
    }
}

extension StoreTests {
    /// SQLite counts no memory: with the statistics on it takes a process-wide mutex around
    /// every allocation, dozens an UPDATE of a task (set before the process's first connection).
    @Test func sqliteKeepsNoMemoryStatistics() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        try store.batch { try store.apply(.insert([TaskRecord(id: 1, session: "s", url: "http://a/f", host: "a")]), now: 1) }
        #expect(try store.task(1) != nil)
        #expect(sqlite3_memory_used() == 0, "SQLite's memory statistics are on")
    }
}

extension StoreTests {
    /// A turn that finishes many downloads sets the badge for each; the store writes it once,
    /// its last value, as the turn commits (and at once outside a turn).
    @Test func aTurnWritesTheBadgeOnceWithItsLastValue() throws {
        let folder = try StoreFolder()
        let store = try folder.open()
        func changes() throws -> Int32 { try store.read { sqlite3_total_changes($0.handle) } }
        let before = try changes()
        try store.batch { for n in 1...3 { try store.apply(.badge(n), now: 1) } }
        #expect(try changes() - before == 1, "one row written for the turn")
        #expect(try store.meta("badge") == "3")
        try store.apply(.badge(4), now: 2)
        #expect(try store.meta("badge") == "4")
    }
}

/// A folder of its own for a test's store, removed with it.
final class StoreFolder {
    let path = NSTemporaryDirectory() + "ferry-store-\(UUID().uuidString)"
    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func open() throws -> Store { try Store(path: StateFolder(path).store) }
}
