import FerryCore
import Foundation
import Glibc
import Testing

/// What a new user meets in the first hour (issue 42), as they would meet it: the real CLI
/// and agent, a removable drive as a small tmpfs mounted and unmounted.
@Suite(.serialized) struct FirstHourTests {
    /// The folder a download goes to is gone when its bytes are in (a stick pulled): the task
    /// keeps every byte and waits, naming the folder; when the stick is back (mounted again)
    /// it is saved at once, not at the next recheck (30 s), and the server sent the file once.
    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func aFolderGoneBeforeTheMoveKeepsEveryByte() throws {
        let h = try Harness()
        try h.startNginx()
        try FileManager.default.createDirectory(atPath: h.www + "/slow", withIntermediateDirectories: true)
        let data = try h.makeFile("slow/talk.bin", size: 60_000)   // 3 s at nginx's 20 kB/s
        let stick = try h.mountSmallDisk(h.root + "/stick", kilobytes: 1_024)
        let folder = stick.path
        try h.startAgent()
        let id = try h.ferry("download", "--dir", folder, "http://127.0.0.1:\(h.nginxPort)/slow/talk.bin").taskID()
        try h.eventually("bytes coming") { (try h.show(id)["received"] as? Int ?? 0) > 0 }
        try stick.pull()
        try h.eventually("waiting for its folder", timeout: 20) { try h.show(id)["reason"] as? String == "folder" }
        let waiting = try h.show(id)
        #expect(waiting["state"] as? String == "waiting" && (waiting["error"] as? String ?? "").contains(folder), "\(waiting)")
        #expect(!FileManager.default.fileExists(atPath: folder), "nothing made where the stick was")
        try stick.plugIn(kilobytes: 1_024)
        try h.eventually("completed", timeout: 15) { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/talk.bin")) == data)
        let log = try String(contentsOfFile: h.root + "/nginx/logs/access.log", encoding: .utf8)
        #expect(log.components(separatedBy: "GET /slow/talk.bin").count - 1 == 1, "\(log)")
    }

    /// `--output` naming a folder saves inside it under the server's name, as cp and mv do.
    @Test func anOutputThatIsAFolderSavesInsideIt() throws {
        let h = try Harness()
        try h.startFaultServer()
        let data = try h.makeFile("paper.pdf", size: 5_000)
        try h.startAgent()
        let papers = h.root + "/Papers"
        try FileManager.default.createDirectory(atPath: papers, withIntermediateDirectories: true)
        let r = try h.run(Harness.ferry, ["download", "--wait", "--output", papers, h.faultURL("paper.pdf")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: papers + "/paper.pdf")) == data)
        #expect(!FileManager.default.fileExists(atPath: h.root + "/Papers (1)"))
    }

    /// A `--dir` that cannot be made says why as the system does, naming the path; no
    /// Foundation error text.
    @Test func aFolderThatCannotBeMadeIsExplainedPlainly() throws {
        let h = try Harness()
        try h.startAgent()
        let file = h.root + "/notes.txt"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let r = try h.run(Harness.ferry, ["download", "--dir", file + "/sub", "http://127.0.0.1:9/x"])
        #expect(r.status == 2)
        #expect(r.stderr == "ferry: cannot create the folder \(file)/sub: \(file): it is not a folder\n", "\(r.stderr)")
    }

    /// download-folder follows the agent's rule: a folder that is not there yet is made at its
    /// first download if the folder it goes in exists; anything deeper is refused at `set`.
    @Test func aDownloadFolderIsMadeAtFirstUseOrRefused() throws {
        let h = try Harness()
        h.useMemoryBackend()
        try h.startFaultServer()
        _ = try h.makeFile("clip.bin", size: 2_000)
        let videos = h.root + "/home/Videos"
        let deep = try h.run(Harness.ferry, ["config", "set", "download-folder", h.root + "/media/stick/Videos"])
        #expect(deep.status == 2 && deep.stderr.contains("neither it nor the folder it would be made in exists"), "\(deep.stderr)")
        try h.config("set", "download-folder", videos)
        try h.startAgent(downloadDir: false)
        let r = try h.run(Harness.ferry, ["download", "--wait", h.faultURL("clip.bin")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: videos + "/clip.bin"))
    }

    /// Reading where the XDG folders are never makes them.
    @Test func theAgentMakesNoFoldersAtStart() throws {
        let h = try Harness()
        try h.startAgent(downloadDir: false)
        #expect(try h.ferry("status").status == 0)
        for name in ["Documents", "Music", "Pictures", "Videos", "Desktop", "Downloads"] {
            #expect(!FileManager.default.fileExists(atPath: h.root + "/home/" + name), "\(name) made")
        }
    }

    /// `ferry list` piped: every row's columns line up with the header (a scheduled task's
    /// state fits), a failed task says why, sizes use plain spaces.
    @Test func theListReadsWellWhenPiped() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.makeFile("done.bin", size: 20_000)
        try h.startAgent()
        #expect(try h.ferry("download", "--wait", h.faultURL("done.bin")).status == 0)
        _ = try h.ferry("download", "--wait", "--tries", "1", h.faultURL("missing.bin"))
        _ = try h.ferry("download", "--start-at", "2099-01-01T00:00:00Z", h.faultURL("later.bin")).taskID()
        let list = try h.ferry("list")
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(list.stdout)")
        let progressColumn = try #require(lines.first?.range(of: "PROGRESS")?.lowerBound.utf16Offset(in: lines[0]))
        for line in lines.dropFirst() {
            let before = String(line.prefix(progressColumn))
            #expect(before.hasSuffix(" ") && !line.dropFirst(progressColumn).hasPrefix(" "), "misaligned: \(line)")
        }
        #expect(lines.contains { $0.contains("waiting (scheduled)") })
        #expect(lines.contains { $0.contains("failed") && $0.contains("missing.bin — ") && $0.contains("404") }, "\(list.stdout)")
        #expect(!list.stdout.contains("\u{00A0}") && list.stdout.contains("20.0 kB"), "\(list.stdout)")
    }

    /// `ferry help` at 80 columns (a terminal, the man page): every example is one whole
    /// command on its line, and the exit status is written down once, in `ferry --help`.
    @Test func helpExamplesAreWholeCommands() throws {
        let h = try Harness()
        var commands = ["download", "upload", "config set"]
        commands.append("")
        for command in commands {
            let r = try h.run("/usr/bin/env", ["COLUMNS=80", Harness.ferry, "help"] + command.split(separator: " ").map(String.init))
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let start = lines.firstIndex(of: "Examples:") else { Issue.record("no examples in ferry help \(command)"); continue }
            let examples = lines[(start + 1)...].prefix { !$0.isEmpty }
            #expect(!examples.isEmpty && examples.allSatisfy { $0.hasPrefix("  ferry ") }, "ferry help \(command): \(examples)")
        }
        let help = try h.run(Harness.ferry, ["--help"]).stdout
        #expect(help.contains("Exit status: 0 done; 1 a task failed") && help.contains("64 a usage error"), "\(help)")
    }
}
