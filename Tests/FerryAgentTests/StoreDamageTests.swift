import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// A damaged store (issue 54, item 8) is no restart loop: the agent moves it aside, starts with
/// a new one, says so (a critical log line, a popup, `ferry status`), keeps the partial
/// downloads, and queues again, paused, what SQLite can still read.
@Suite(.serialized) struct StoreDamageTests {
    /// A download with 30,000 bytes in staging, paused, and one scheduled for 2099; the agent
    /// stopped, its WAL checkpointed into the store file. The first task's data, the two ids.
    static func storeWithTwoTasks(_ h: Harness) throws -> (data: Data, partial: Int64, scheduled: Int64) {
        try h.startNotificationServer()
        try h.startFaultServer()
        let data = try h.makeFile("a.bin", size: 100_000)
        try h.startAgent()
        let partial = try h.ferry("download", h.faultURL("a.bin", "hold=30000")).taskID()
        try h.eventually("30,000 bytes staged") { (try h.show(partial)["received"] as? Int) == 30_000 }
        #expect(try h.ferry("pause", "\(partial)").status == 0)
        let scheduled = try h.run(Harness.ferry, ["download", h.faultURL("a.bin"), "--start-at", "2099-01-01T00:00:00Z"])
        let id = try scheduled.taskID()
        let listed = try h.ferry("list", "--json")
        #expect(listed.stdout.contains("\"id\" : \(partial)") || listed.stdout.contains("\"id\":\(partial)"), "\(listed.stdout)")
        h.killAgent(signal: SIGTERM)
        // Its log checkpointed into the store file (SQLite reads a page from the log while the
        // log has it: damage to the file alone would be masked).
        let checkpoint = try h.run("/usr/bin/python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
            db.execute('PRAGMA journal_mode = DELETE')
            db.close()
            """, StateFolder(h.state).store])
        #expect(checkpoint.status == 0, "\(checkpoint.stderr)")
        return (data, partial, id)
    }

    /// Garbage over `length` bytes of the store from byte `offset`.
    static func damage(_ h: Harness, at offset: Int, length: Int = 4096) throws {
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: StateFolder(h.state).store))
        try file.seek(toOffset: UInt64(offset))
        try file.write(contentsOf: Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }))
        try file.close()
    }

    /// Where the agent moved the damaged store, as `ferry status --json` says.
    static func damagedStore(_ h: Harness) throws -> String? {
        let r = try h.ferry("status", "--json")
        #expect(r.status == 0, "the agent did not stay up: \(r.stderr) \(h.agentLog.suffix(500))")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return obj?["damaged-store"] as? String
    }

    /// Page 1 garbage ("file is not a database"): nothing can be read back; the agent runs on
    /// a new store, the partial bytes stay, a new task takes no old task's id.
    @Test func garbageOverThePageOneStartsANewStore() throws {
        let h = try Harness()
        let old = try Self.storeWithTwoTasks(h)
        try Self.damage(h, at: 0)
        try h.startAgent()
        let aside = try #require(try Self.damagedStore(h), "\(h.agentLog.suffix(3000))")
        #expect(aside.hasPrefix(StateFolder(h.state).store + ".damaged-") && FileManager.default.fileExists(atPath: aside))
        #expect(h.agentLog.contains("is damaged") && h.agentLog.contains("moved aside to \(aside)"))
        #expect(FileManager.default.fileExists(atPath: StateFolder(h.state).staged(old.partial)))
        let fresh = try h.ferry("download", h.faultURL("a.bin")).taskID()
        #expect(fresh > old.partial)
        try h.eventually("the new download completed") { try h.show(fresh)["state"] as? String == "completed" }
        try h.eventually("a popup said so") { try h.popups().contains { $0.summary == "Ferry's list of transfers was damaged" } }
        h.killAgent(signal: SIGTERM)  // a second start is an ordinary one
        try h.startAgent()
        #expect(try Self.damagedStore(h) == nil)
    }

    /// A damaged leaf page (the events table's: "malformed"): the sessions and tasks SQLite can
    /// still read come back, unfinished ones paused; the partial download resumes from its bytes.
    @Test func aDamagedPageLeavesWhatCanBeReadPaused() throws {
        let h = try Harness()
        let old = try Self.storeWithTwoTasks(h)
        let page = try h.run("/usr/bin/python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            size = db.execute('PRAGMA page_size').fetchone()[0]
            root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
            print((root - 1) * size, size)
            """, StateFolder(h.state).store])
        let numbers = page.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(numbers.count == 2, "\(page.stdout) \(page.stderr)")
        try Self.damage(h, at: numbers[0], length: numbers[1])
        try h.startAgent()
        #expect(try Self.damagedStore(h) != nil)
        #expect(try h.show(old.partial)["state"] as? String == "paused" && h.show(old.scheduled)["state"] as? String == "paused")
        #expect(try h.ferry("resume", "\(old.partial)").status == 0)
        try h.eventually("the partial download completed") { try h.show(old.partial)["state"] as? String == "completed" }
        let file = try #require(try h.show(old.partial)["file"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == old.data)
        let ranges = try h.serverLog().compactMap(\.rangeStart)
        #expect(ranges == [30_000], "the bytes in staging were not reused: \(ranges)")
    }
}
