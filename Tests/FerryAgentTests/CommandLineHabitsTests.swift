import FerryCore
import Foundation
import Testing

/// The command line as wget, aria2 and curl users expect it (issue 57): several URLs and `-i`
/// lists in one command, Ctrl-C that says what goes on, the exit statuses ferry(1) tables, a
/// URL without a scheme.
@Suite struct CommandLineHabitsTests {
    /// Three URLs (two as arguments, one from a list with aria2's out= line) queued by one
    /// command: an id a line, one combined wait, every file where it was asked to go.
    @Test func severalURLsAndAListAreQueuedAndWaitedForTogether() throws {
        let h = try Harness()
        let a = try h.makeFile("a.txt", size: 10_000), b = try h.makeFile("b.txt", size: 20_000)
        let c = try h.makeFile("c.txt", size: 30_000)
        try h.startFaultServer()
        try h.startAgent()
        let list = h.root + "/urls.txt"
        try "# a wget/aria2 list\n\n\(h.faultURL("c.txt"))\n  out=renamed.txt\n".write(toFile: list, atomically: true, encoding: .utf8)
        let got = h.root + "/got"
        let r = try h.ferry("download", h.faultURL("a.txt"), h.faultURL("b.txt"), "-i", list, "-d", got, "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        let ids = r.stdout.split(separator: "\n").compactMap { Int64($0) }
        #expect(ids.count == 3 && Set(ids).count == 3, "\(r.stdout)")
        #expect(r.stderr.contains("3 of 3 done") || r.stderr.components(separatedBy: "saved to").count == 4, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: got + "/a.txt") == a)
        #expect(FileManager.default.contents(atPath: got + "/b.txt") == b)
        #expect(FileManager.default.contents(atPath: got + "/renamed.txt") == c)
    }

    /// `-i -` reads the list from stdin; one URL that fails makes the exit status 1, and it is
    /// named, while the others are saved.
    @Test func aListFromStdinWithAFailureNamesIt() throws {
        let h = try Harness()
        let a = try h.makeFile("a.txt", size: 10_000)
        try h.startFaultServer()
        try h.startAgent()
        let got = h.root + "/got"
        let r = try h.run("/bin/sh", ["-c", "printf '%s\\n' '\(h.faultURL("a.txt"))' '\(h.faultURL("missing.txt"))' | \(Harness.ferry) download -i - -P \(got) --wait"])
        #expect(r.status == 1, "\(r.stderr)")
        let ids = r.stdout.split(separator: "\n").compactMap { Int64($0) }
        #expect(ids.count == 2)
        #expect(r.stderr.contains("task \(ids[1]) failed") && r.stderr.contains("1 of 2 tasks did not complete: \(ids[1])"), "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: got + "/a.txt") == a)
    }

    /// A list ferry cannot read is refused by its line, and nothing is queued.
    @Test func aBadListIsRefusedByLineAndQueuesNothing() throws {
        let h = try Harness()
        try h.startAgent()
        let list = h.root + "/urls.txt"
        try "https://example.org/a\n  split=4\n".write(toFile: list, atomically: true, encoding: .utf8)
        let r = try h.ferry("download", "--input-file", list)
        #expect(r.status == 2 && r.stderr.contains("line 2") && r.stderr.contains("split"), "\(r.stderr)")
        let listed = try JSONSerialization.jsonObject(with: Data(try h.ferry("list", "--json").stdout.utf8)) as? [Any]
        #expect(listed?.isEmpty == true, "nothing queued")
    }

    /// Ctrl-C on a terminal while `--wait` follows a download: the line is ended, the user is
    /// told the task goes on and how to stop it, exit 130; the download does go on.
    @Test func ctrlCSaysTheDownloadGoesOn() throws {
        let h = try Harness()
        let data = try h.makeFile("slow.bin", size: 600_000)
        try h.startFaultServer()
        try h.startAgent()
        let screen = h.root + "/screen.txt"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qefc", "\(Harness.ferry) download --wait -o \(h.root)/slow.bin '\(h.faultURL("slow.bin", "rate=200000"))'", screen]
        p.environment = h.environment
        let keys = Pipe()
        p.standardInput = keys
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        try h.eventually("the bar") { ((try? String(contentsOfFile: screen, encoding: .utf8)) ?? "").contains("%") }
        keys.fileHandleForWriting.write(Data([3]))  // Ctrl-C, through the terminal as a user types it
        try h.waitForExit(p, "ferry download --wait")
        let text = try String(contentsOfFile: screen, encoding: .utf8)
        #expect(p.terminationStatus == 130, "\(text.debugDescription)")
        #expect(text.contains("goes on in the background") && text.contains("ferry cancel 1"), "\(text)")
        try h.eventually("the file", timeout: 30) { FileManager.default.contents(atPath: h.root + "/slow.bin") == data }
    }

    /// Every exit status of ferry(1)'s table, as a user meets it.
    @Test func theExitStatusesAreTheTables() throws {
        let h = try Harness()
        try h.makeFile("ok.txt", size: 1_000)
        try h.startFaultServer()
        try h.startAgent()
        let table: [(args: [String], status: Int32)] = [
            (["download", "--wait", h.faultURL("ok.txt"), "-o", h.root + "/ok.txt"], 0),
            (["download", "--wait", h.faultURL("missing.txt")], 1),
            (["show", "999"], 2), (["pause", "999"], 2), (["cancel", "999"], 2), (["resume", "999"], 2),
            (["show", "0"], 2),
            (["download", "--priority", "3", h.faultURL("ok.txt")], 2),
            (["download", "--max-rate", "fast", h.faultURL("ok.txt")], 2),
            (["download", "--timeout", "soon", h.faultURL("ok.txt")], 2),
            (["download", "ftp://example.org/f"], 2),
            (["download", "example.org/f.pdf"], 2),
            (["download"], 64), (["download", "--bogus", h.faultURL("ok.txt")], 64), (["show"], 64),
        ]
        for (args, status) in table {
            let r = try h.run(Harness.ferry, args)
            #expect(r.status == status, "ferry \(args.joined(separator: " ")): \(r.status) \(r.stderr)")
        }
        let schemeless = try h.ferry("download", "example.org/f.pdf")
        #expect(schemeless.stderr.contains("add https:// (ferry download https://example.org/f.pdf)"), "\(schemeless.stderr)")
        let quiet = try h.run("/usr/bin/script", ["-qefc", "\(Harness.ferry) download -q --wait -o \(h.root)/quiet.txt '\(h.faultURL("ok.txt"))'", "/dev/null"])
        #expect(quiet.status == 0 && !quiet.stdout.contains("saved to") && !quiet.stdout.contains("%"), "-q, as wget's: \(quiet.stdout)")
        let swapped = try h.ferry("upload", "https://example.org/up", h.root + "/ok.txt")
        #expect(swapped.status == 2 && swapped.stderr.contains("the file comes first"), "\(swapped.stderr)")
    }

    /// A task that waits says until when: its start time, or its next attempt, in `show`,
    /// `list` and the JSON (Unix seconds; the key only when the task has one).
    @Test func aWaitingTaskSaysWhenItGoesOn() throws {
        let h = try Harness()
        try h.startAgent(["--retry-base-ms", "600000", "--retry-cap-ms", "600000"])
        let start = Int(Date().timeIntervalSince1970) + 3_600
        let scheduled = try h.ferry("download", "--start-at", String(start), "https://example.org/later.iso").taskID()
        let shown = try h.show(scheduled)
        #expect(shown["start-at"] as? Int == start && shown["next-attempt"] == nil, "\(shown)")
        #expect(try h.ferry("show", String(scheduled)).stdout.contains("starts:   "))
        #expect(try h.ferry("list").stdout.contains("— starts "))
        let closed = "http://127.0.0.1:\(try Harness.freePort())/nothing.bin"
        let retrying = try h.ferry("download", closed).taskID()
        try h.eventually("waiting to retry") { try h.show(retrying)["reason"] as? String == "retry" }
        let next = try #require(try h.show(retrying)["next-attempt"] as? Int)
        #expect(next > Int(Date().timeIntervalSince1970) + 60, "the backoff's time, ten minutes on")
        #expect(try h.ferry("show", String(retrying)).stdout.contains("next try: "))
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try h.ferry("list", "--json").stdout.utf8)) as? [[String: Any]])
        #expect(listed.first { $0["id"] as? Int == Int(scheduled) }?["start-at"] as? Int == start)
        #expect(listed.first { $0["id"] as? Int == Int(retrying) }?["next-attempt"] as? Int == next)
    }
}

/// Tab completion offers the ids a command takes (what the shell scripts ferry generates ask
/// with `---completion`).
@Suite struct TaskIDCompletionTests {
    static func offered(_ h: Harness, _ command: String) throws -> Set<Int64> {
        let r = try h.run(Harness.ferry, ["---completion", command, "--", "positional@0", "2", "0", "ferry", command, ""])
        return Set(r.stdout.split(separator: "\n").compactMap { Int64($0) })
    }

    @Test func eachCommandIsOfferedTheTasksItTakes() throws {
        let h = try Harness()
        try h.makeFile("done.txt", size: 1_000)
        try h.startFaultServer()
        try h.startAgent()
        let done = try h.ferry("download", "--wait", h.faultURL("done.txt")).taskID()
        let failed = try h.ferry("download", "--wait", h.faultURL("missing.txt")).taskID()
        let paused = try h.ferry("download", "--start-at", "23:59", h.faultURL("later.txt")).taskID()
        _ = try h.ferry("pause", String(paused))
        let scheduled = try h.ferry("download", "--start-at", "23:59", h.faultURL("later2.txt")).taskID()
        #expect(try Self.offered(h, "resume") == [failed, paused, scheduled])
        #expect(try Self.offered(h, "pause") == [scheduled])
        #expect(try Self.offered(h, "open") == [done])
        #expect(try Self.offered(h, "set-url") == [failed, paused, scheduled])
    }
}

/// `ferry view --terminal` shows what failed and why, as the window does (issue 57 item 10).
@Suite struct TextViewTests {
    @Test func failedTasksAreShownWithTheirReason() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let failed = try h.ferry("download", "--wait", h.faultURL("missing.txt")).taskID()
        let view = try h.ferry("view", "--terminal")
        #expect(view.status == 0, "\(view.stderr)")
        let section = view.stdout.components(separatedBy: "Failed\n").last ?? ""
        #expect(view.stdout.contains("Failed\n") && section.contains("\(failed)") && section.contains("HTTP 404"), "\(view.stdout)")
    }
}
