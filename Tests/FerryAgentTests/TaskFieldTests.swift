import CSQLite
@testable import FerryAgent
import FerryBus
import FerryCore
import Testing

/// `TaskField.all` is the one table of a task's fields: the store, the bus and the CLI's JSON
/// are made from it, so a field left out of it is lost on the way, which these tests catch.
@Suite struct TaskFieldTests {
    /// A record with every field away from its default.
    static var full: TaskRecord {
        var r = TaskRecord(
            id: 7, session: "s", url: "https://example.com/a", host: "example.com", state: .waiting,
            reason: .retry, received: 10, expected: 20, etag: "\"e\"", lastModified: "Tue, 1 Dec 2026 10:00:00 GMT",
            directory: "/d", output: "/d/o", file: "/d/f", suggestedName: "n.bin", sha256: "ab",
            description: "words", headers: ["x-a": "1"], error: "gone", errorName: "dev.ferry.Error.Http",
            attempts: 3, retryAt: 99, created: 5_000_000, updated: 6_000_000)
        r.kind = .upload; r.method = "POST"; r.uploadFile = "/u"; r.priority = 0.9; r.maxRate = 1_000
        r.maxAttempts = 4; r.deadline = 123; r.replyFile = "/inbox/r"; r.replyStatus = 201; r.replyCut = true
        r.replyHeaders = ["etag": "y"]; r.resumable = .tus; r.uploadURL = "https://example.com/files/1"
        r.keepsEncoding = true
        return r
    }

    @Test func everyKeyOfTheXMLIsOneField() {
        let keys = TaskField.all.compactMap(\.key)
        #expect(keys.count == Set(keys).count, "a key spelled twice")
        #expect(Set(keys) == Set(TaskInfo.Key.allCases), "the XML's keys of the task info and the table's")
        #expect(TaskInfo.rowType == "(tssssssxxsssssuxxx)", "ListTaskRows' struct, as the XML types it")
    }

    /// Every field of a record goes into its column and comes back, on an INSERT and an UPDATE;
    /// the table's columns are the store's, no more and no fewer.
    @Test func theStoreKeepsEveryField() throws {
        let store = try StoreFolder().open()
        var r = Self.full
        try store.batch { try store.apply(.insert([r]), now: 1) }
        #expect(try store.task(7) == r)
        r.replyHeaders = nil; r.expected = nil; r.description = ""; r.keepsEncoding = false; r.state = .running
        try store.batch { try store.apply(.update(r), now: 2) }
        #expect(try store.task(7) == r)
        let columns = try store.read { db in try db.prepare("SELECT name FROM pragma_table_info('tasks')").texts() }
        #expect(Set(columns) == Set(TaskField.stored.compactMap(\.column)))
    }

    /// What the API shows goes over the bus and comes back the same, as a dictionary and as a
    /// row (its fields); the agent's own fields stay behind.
    @Test func theBusCarriesWhatTheAPIShows() throws {
        let info = TaskInfo(Self.full, app: "org.example.App")
        let read = try TaskInfo(bus: info.dictionary)
        #expect(read == info)
        #expect(read.etag == nil && read.headers.isEmpty && read.host == "" && read.deadline == nil)
        for f in TaskField.shown { #expect(f.value(read) == f.value(info), "\(f.key!)") }
        let row = try #require(try TaskInfo(row: info.row))
        for f in TaskField.row { #expect(f.value(row) == f.value(info), "\(f.key!)") }
        #expect(row.priority == 0.5 && row.app == "", "the row leaves out what is not in its struct")
    }

    /// An answered upload's reply keys go together (the XML: all of them or none); the optional
    /// keys stay out at their defaults.
    @Test func optionalKeysGoWhenSet() throws {
        var plain = TaskRecord(session: "s", url: "https://example.com/a", host: "example.com")
        let keys = Set(TaskInfo(plain).dictionary.keys)
        #expect(keys == Set(TaskInfo.Key.allCases.filter(\.required).map(\.rawValue)))
        plain.replyStatus = 204
        let answered = TaskInfo(plain).dictionary
        #expect(answered["reply-cut"] == .bool(false) && answered["reply-file"] == .string(""))
        #expect(answered["reply-headers"] == .stringDict([:]) && answered["priority"] == nil)
    }
}
