@testable import FerryAgent
import Foundation
import Glibc
import Logging
import Testing

/// Where ferryd's lines go: the journal (with their priority) under systemd, a capped file
/// when ferry started it.
@Suite(.serialized) struct LogTests {
    /// The file never passes its limit: the full one becomes FILE.1 and a new one starts.
    @Test func theLogFileStaysUnderItsLimit() throws {
        let dir = NSTemporaryDirectory() + "ferry-log-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/ferryd.log"
        let handler = RotatingFileLogHandler(path: path)
        let line = String(repeating: "x", count: 1_000)
        for i in 0..<3_000 {
            handler.log(level: .info, message: "\(i) \(line)", metadata: nil, source: "t", file: #file, function: #function, line: #line)
        }
        let size = { (p: String) in (try FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0 }
        #expect(try size(path) <= Int(RotatingFileLogHandler.limit))
        #expect(try size(path + ".1") <= Int(RotatingFileLogHandler.limit))
        #expect(try size(path + ".1") > Int(RotatingFileLogHandler.limit) / 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("2999 x"))
        #expect(!FileManager.default.fileExists(atPath: path + ".2"))
    }

    /// Under systemd (JOURNAL_STREAM names the agent's stderr) lines go to the journal's native
    /// socket with their priority, not to stderr. Stands in for journald only where none runs.
    @Test(.enabled(if: getuid() == 0 && !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket"),
                   "needs root and no journald (the test binds its socket)"))
    func underSystemdLinesGoToTheJournalWithTheirPriority() throws {
        let h = try Harness()
        let entries = h.root + "/journal.txt"
        let listener = try h.spawnWaitable("/usr/bin/python3", [Harness.packageRoot + "/Tests/Support/journal-listener.py",
                                                                "/run/systemd/journal/socket", entries])
        defer {   // Process's children start with signals blocked: SIGKILL, and its socket by hand
            kill(listener.processIdentifier, SIGKILL)
            listener.waitUntilExit()
            unlink("/run/systemd/journal/socket")
        }
        try h.eventually("the stand-in journal listening") { FileManager.default.fileExists(atPath: "/run/systemd/journal/socket") }
        FileManager.default.createFile(atPath: h.root + "/agent.log", contents: nil)
        var st = stat()
        #expect(stat(h.root + "/agent.log", &st) == 0)
        try h.startAgent(["--log-level", "info"], environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"])
        try h.eventually("the ready line in the journal") {
            ((try? String(contentsOfFile: entries, encoding: .utf8)) ?? "").contains("ready on the session bus")
        }
        let journal = try String(contentsOfFile: entries, encoding: .utf8)
        let ready = try #require(journal.components(separatedBy: "\n\n").first { $0.contains("ready on the session bus") })
        #expect(ready.contains("PRIORITY=6") && ready.contains("SYSLOG_IDENTIFIER=ferryd"))
        #expect(!h.agentLog.contains("ready on the session bus"))
    }

    /// An agent `ferry` starts itself (no D-Bus activation) logs to its capped file.
    @Test func anAgentTheCLIStartsLogsToItsCappedFile() throws {
        let h = try Harness()
        let r = try h.run(Harness.ferry, ["status", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let pid = try #require(status["pid"] as? Int32)
        defer { kill(pid, SIGKILL) }
        let cmdline = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).replacingOccurrences(of: "\0", with: " ")
        let log = h.root + "/home/.local/state/ferry/ferryd.log"
        #expect(cmdline.contains("--log-file \(log)"))
        try h.eventually("the ready line in ferryd.log") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ready on the session bus")
        }
        // Its lines read as stderr's do: the zone, and the module that spoke; news said once.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let ready = try #require(lines.first { $0.contains("ready on the session bus") })
        #expect(ready.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info ferryd: \[ferryd\] "#,
                            options: .regularExpression) != nil, "\(ready)")
        #expect(lines.filter { $0.hasSuffix("network available") }.count <= 1, "\(lines)")
    }

    /// A download that fails for good is a warning naming the task and why (what
    /// `journalctl --user -u ferryd -p warning` shows); an attempt retried stays at info.
    @Test func aPermanentFailureIsAWarning() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("there.bin", size: 100)
        let gone = try h.ferry("download", h.faultURL("missing.bin"), "--wait")
        #expect(gone.status == 1)
        let retried = try h.ferry("download", h.faultURL("there.bin", "status=503&times=1"), "--wait")
        #expect(retried.status == 0, "\(retried.stderr)")
        let warnings = h.agentLog.split(separator: "\n").filter { $0.contains(" warning ferryd:") }
        #expect(warnings.contains { $0.contains("task 1 failed:") && $0.contains("404") && $0.contains("missing.bin") }, "\(warnings)")
        #expect(!warnings.contains { $0.contains("task 2") }, "\(warnings)")   // its 503 was retried: info only
        #expect(h.agentLog.contains("task 2: attempt ended: curl 22 HTTP 503"))
        // The cause comes before the failure it led to.
        let lines = h.agentLog.split(separator: "\n")
        let cause = lines.firstIndex { $0.contains("task 1: attempt ended") }
        let failure = lines.firstIndex { $0.contains("task 1 failed:") }
        #expect(cause != nil && failure != nil && cause! < failure!, "\(lines)")
    }
}
