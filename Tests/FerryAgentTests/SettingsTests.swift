import FerryBus
import FerryCore
import Foundation
import Testing

/// The agent's settings in GSettings (schema dev.ferry.Agent): `ferry config` writes them, the
/// running agent follows, a restart keeps them, a flag wins for its run.
@Suite(.serialized) struct SettingsTests {
    enum Backend: String, CaseIterable, Sendable { case dconf, keyfileFallback }

    static func states(_ h: Harness) throws -> [String] {
        let out = try h.ferry("list", "--json").stdout
        let list = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]])
        return list.compactMap { $0["state"] as? String }
    }

    /// Transfers at once: set before the agent starts, raised while it runs (the queued ones
    /// start at once), kept across a restart; through dconf as on a desktop, and through
    /// Ferry's key file where GLib has only its memory backend.
    @Test(arguments: Backend.allCases) func maxTransfersFollowsTheSettingLive(_ backend: Backend) throws {
        let h = try Harness()
        switch backend {
        case .dconf: try h.enableDconf()
        case .keyfileFallback: h.useMemoryBackend()
        }
        try h.config("set", "max-transfers", "1")
        try h.config("set", "max-per-host", "5")
        if backend == .keyfileFallback {
            let file = try String(contentsOfFile: h.root + "/home/.config/ferry/settings.ini", encoding: .utf8)
            #expect(file.contains("max-transfers=1"))
        } else {
            #expect(FileManager.default.fileExists(atPath: h.root + "/home/.config/dconf/user"))
        }
        try h.startFaultServer()
        try h.startAgent()
        for name in ["a", "b", "c"] {
            try h.makeFile("\(name).bin", size: 200_000)
            _ = try h.ferry("download", h.faultURL("\(name).bin", "hold=1000")).taskID()
        }
        try h.eventually("one running, two queued") { try Self.states(h).sorted() == ["queued", "queued", "running"] }

        try h.config("set", "max-transfers", "3")
        try h.eventually("all three running once the setting is raised") { try Self.states(h) == ["running", "running", "running"] }
        try h.releaseHolds()
        try h.eventually("all three completed") { try Self.states(h) == ["completed", "completed", "completed"] }

        h.killAgent()
        try h.startAgent()
        #expect(try h.config("get", "max-transfers") == "3")
        #expect(h.agentLog.contains("setting max-transfers changed"))
    }

    /// download-folder: where the CLI's downloads go when nothing else says; changed live; an
    /// empty value is XDG's download folder again; `ferryd --download-dir` wins over it.
    @Test func downloadFolderIsFollowedAndTheFlagWins() throws {
        let h = try Harness()
        h.useMemoryBackend()
        let chosen = h.root + "/home/Chosen", xdg = h.root + "/home/Downloads"
        try FileManager.default.createDirectory(atPath: chosen, withIntermediateDirectories: true)
        try h.makeFile("one.bin", size: 1_000)
        try h.makeFile("two.bin", size: 1_000)
        try h.makeFile("three.bin", size: 1_000)
        try h.startFaultServer()
        try h.config("set", "download-folder", chosen)
        try h.startAgent(downloadDir: false)
        #expect(try h.ferry("download", "--wait", h.faultURL("one.bin")).status == 0)
        #expect(FileManager.default.fileExists(atPath: chosen + "/one.bin"))

        try h.config("reset", "download-folder")
        try h.eventually("the agent saw the change") { h.agentLog.contains("setting download-folder changed") }
        #expect(try h.ferry("download", "--wait", h.faultURL("two.bin")).status == 0)
        #expect(FileManager.default.fileExists(atPath: xdg + "/two.bin"))

        try h.config("set", "download-folder", chosen)
        h.killAgent()
        try h.startAgent(downloadDir: true)
        #expect(try h.ferry("download", "--wait", h.faultURL("three.bin")).status == 0)
        #expect(FileManager.default.fileExists(atPath: h.downloads + "/three.bin"))
        #expect(!FileManager.default.fileExists(atPath: chosen + "/three.bin"))
    }

    /// Bad values are refused with the key, the value and what is allowed (exit 2); sizes are
    /// read as curl reads them; `list --json` shows every key with its default.
    @Test func configRefusesBadValuesAndListsEveryKey() throws {
        let h = try Harness()
        h.useMemoryBackend()
        let zero = try h.run(Harness.ferry, ["config", "set", "max-transfers", "0"])
        #expect(zero.status == 2)
        #expect(zero.stderr == "ferry: max-transfers 0: must be a whole number from 1 to 1000\n")
        // A value may begin with '-': refused by its range like any other, not taken for an option.
        let negative = try h.run(Harness.ferry, ["config", "set", "max-transfers", "-4"])
        #expect(negative.status == 2 && negative.stderr == "ferry: max-transfers -4: must be a whole number from 1 to 1000\n", "\(negative.stderr)")
        let limit = try h.run(Harness.ferry, ["config", "set", "download-limit", "-1"])
        #expect(limit.status == 2 && limit.stderr.contains("download-limit -1:"), "\(limit.stderr)")
        #expect(try h.run(Harness.ferry, ["config", "set", "max-transfers"]).status == 64)   // no value: a usage error
        let word = try h.run(Harness.ferry, ["config", "set", "popups", "maybe"])
        #expect(word.status == 2 && word.stderr.contains("popups maybe: must be true or false"))
        let unknown = try h.run(Harness.ferry, ["config", "get", "speed"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no setting named 'speed'"))
        let relative = try h.run(Harness.ferry, ["config", "set", "download-folder", "Videos"])
        #expect(relative.status == 2 && relative.stderr.contains("must be an absolute path"))
        #expect(try h.config("get", "max-transfers") == "6")

        // A limit reads as a rate, in the units it is set in, and what get prints set takes back.
        try h.config("set", "download-limit", "2M")
        #expect(try h.config("get", "download-limit") == "2.0 MiB/s")
        try h.config("set", "upload-limit", "500K")
        #expect(try h.config("get", "upload-limit") == "500.0 KiB/s")
        try h.config("set", "upload-limit", try h.config("get", "download-limit"))
        #expect(try h.config("get", "upload-limit") == "2.0 MiB/s")

        let json = try h.config("list", "--json")
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let byKey = Dictionary(uniqueKeysWithValues: keys.map { ($0["key"] as! String, $0) })
        #expect(Set(byKey.keys) == ["allow-metered", "download-folder", "download-limit", "keep-ended-days", "max-per-host",
                                     "max-transfers", "popup-window-ms", "popups", "upload-limit"])
        #expect(byKey["download-limit"]?["value"] as? Int == 2_097_152)
        #expect(byKey["download-limit"]?["set"] as? Bool == true)
        #expect(byKey["max-transfers"]?["default"] as? Int == 6)
        #expect(byKey["max-transfers"]?["set"] as? Bool == false)
        #expect((byKey["popups"]?["summary"] as? String)?.isEmpty == false)
    }
}
