import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The fault matrix: each fault against real parts (the fault server, a real dbus-daemon,
/// real file systems), each asserting no byte lost, nothing corrupt delivered, no crash.
@Suite(.serialized) struct FaultTests {
    func state(_ h: Harness, _ id: Int64) throws -> (String, String?) {
        let info = try h.show(id)
        return (info["state"] as? String ?? "", info["reason"] as? String)
    }

    func stagingSize(_ h: Harness, _ id: Int64) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: StateFolder(h.state).staged(id)))?[.size] as? Int
    }

    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func fullDestinationKeepsTheBytesAndSavesThemWhenSpaceReturns() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startNotificationServer()
        // Look again every 0.2 s (doubling): several rechecks happen while the disk is full.
        try h.startAgent(["--space-recheck", "0.2", "--popup-window-ms", "100"])
        let usb = try h.mountSmallDisk(h.root + "/usb", kilobytes: 4 * 1024)
        let data = try h.makeFile("big.iso", size: 12_000_000)
        let r = try h.ferry("download", h.faultURL("big.iso"), "--dir", usb.path)
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        try h.eventually("task waits for space") { try state(h, id) == ("waiting", "space") }
        // Every byte is kept in staging, nothing half-written reached the small disk.
        #expect(stagingSize(h, id) == data.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: usb.path).isEmpty)
        #expect((try h.show(id)["error"] as? String)?.contains("not enough space in \(usb.path)") == true)
        // It looked again (attempts count the rechecks), and said so once, not once per recheck.
        try h.eventually("three rechecks") { (try h.show(id)["attempts"] as? Int ?? 0) >= 3 }
        try h.eventually("the popup") { try h.popups().contains { $0.summary.hasPrefix("Not enough space") } }
        let warnings = try h.popups().filter { $0.summary.hasPrefix("Not enough space") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.summary == "Not enough space to save big.iso")
        // Space returns; Resume tries at once and the file is saved without fetching it again.
        try usb.resize(kilobytes: 32 * 1024)
        #expect(try h.ferry("resume", String(id)).status == 0)
        try h.eventually("task completed") { try state(h, id).0 == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: usb.path + "/big.iso")) == data)
        // The staging name and the hidden copy go once the completion is on disk (till then they
        // tell a restarted agent the file is linked already): just after "completed" is heard.
        try h.eventually("only the file is left") {
            try FileManager.default.contentsOfDirectory(atPath: usb.path) == ["big.iso"] && stagingSize(h, id) == nil
        }
        let requests = try h.serverLog().filter { $0.path == "/big.iso" }
        #expect(requests.count == 1)
        #expect(requests.first?.sent == data.count)
    }

    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func fullStateDiskWaitsForSpaceAndTheStoreStillCommits() throws {
        let h = try Harness()
        try h.startFaultServer()
        let disk = try h.mountSmallDisk(h.state, kilobytes: 8 * 1024)
        let reserve = ["--state-reserve-mb", "2", "--state-reserve-percent", "1"]
        try h.startAgent(reserve)
        let data = try h.makeFile("big.bin", size: 12_000_000)
        let r = try h.ferry("download", h.faultURL("big.bin"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        try h.eventually("task waits for space") { try state(h, id) == ("waiting", "space") }
        #expect((try h.show(id)["error"] as? String)?.contains("state folder is nearly full") == true)
        // The decision was committed: a killed agent finds the task where it left it.
        h.killAgent()
        try h.startAgent(reserve + ["--space-recheck", "600"])
        #expect(try state(h, id).1 == "space" || state(h, id).0 == "running")
        // The API still answers and still takes requests.
        #expect(try h.ferry("status").status == 0)
        try disk.resize(kilobytes: 64 * 1024)
        #expect(try h.ferry("resume", String(id)).status == 0)
        try h.eventually("task completed") { try state(h, id).0 == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/big.bin")) == data)
    }

    /// A staging file that cannot be made (a folder stands where it would go; the state folder
    /// is on a local disk, so the loop makes it itself) fails that task clearly, and nothing else:
    /// the next download completes.
    @Test func aStagingFileThatCannotBeMadeFailsItsTaskAndNothingElse() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        _ = try h.makeFile("a.bin", size: 50_000)
        let data = try h.makeFile("b.bin", size: 50_000)
        try FileManager.default.createDirectory(atPath: StateFolder(h.state).staged(1), withIntermediateDirectories: true)
        let r = try h.ferry("download", h.faultURL("a.bin"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        #expect(id == 1, "a fresh agent's first task")
        try h.eventually("task failed") { try state(h, id).0 == "failed" }
        let info = try h.show(id)
        let error = info["error"] as? String ?? ""
        #expect(error.contains("staging file") && error.contains("1.part"), "\(info)")
        let second = try h.ferry("download", h.faultURL("b.bin"), "--wait")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/b.bin")) == data)
    }

    @Test func checksumMismatchIsQuarantinedNeverDelivered() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("c.bin", size: 100_000)
        let r = try h.ferry("download", h.faultURL("c.bin"), "--sha256", String(repeating: "0", count: 64), "--wait")
        #expect(r.status == 1)
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stdout)")
        let quarantined = StateFolder(h.state).quarantined(id)
        let info = try h.show(id)
        #expect(info["state"] as? String == "failed")
        #expect((info["error"] as? String)?.contains(quarantined) == true, "\(info)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: quarantined)) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).isEmpty)
        #expect(stagingSize(h, id) == nil)
        // Retrying discards the quarantined bytes: the next attempt fetches from byte zero.
        #expect(try h.ferry("resume", String(id)).status == 0)
        try h.eventually("failed again") {
            try state(h, id).0 == "failed" && (try h.serverLog().filter { $0.path == "/c.bin" }.count) == 2
        }
        #expect(try h.serverLog().filter { $0.path == "/c.bin" }.allSatisfy { $0.range == nil })
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).isEmpty)
    }

    @Test(.enabled(if: Harness.canMakeNetworkNamespaces, "needs root to make a network namespace"))
    func noDefaultRouteStillReachesTheServer() throws {
        let h = try Harness()
        try h.isolateNetwork()   // loopback only: the network monitor reports no network
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("lab.bin", size: 500_000)
        let r = try h.ferry("download", h.faultURL("lab.bin"))
        let lab = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        try h.eventually("download from loopback completed") { try state(h, lab).0 == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/lab.bin")) == data)
        // A server that cannot be reached says why instead of sitting in the queue.
        let far = try h.ferry("download", "http://192.0.2.1:9/far.bin")
        let id = try #require(Int64(far.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("unreachable task waits for the network") { try state(h, id) == ("waiting", "network") }
        #expect(try h.show(id)["attempts"] as? Int == 0)
    }

    @Test func hungNotificationServerNeverStallsTheAgent() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startNotificationServer(hanging: true)
        try h.startAgent(["--popup-window-ms", "50"])
        try h.makeFile("one.bin", size: 1_000)
        #expect(try h.ferry("download", h.faultURL("one.bin"), "--wait").status == 0)
        // The popup's Notify call is now outstanding and will never be answered (libnotify
        // waits 25 s for it). The API answers meanwhile, well within a 2 s client timeout…
        try h.eventually("the popup reached the server") { try !h.popups().isEmpty }
        let c = try h.client()
        c.timeoutMilliseconds = 2_000
        for _ in 0..<20 { #expect(try c.call("GetStatus").first?.dictValue?["version"] != nil) }
        // …and transfers go on.
        try h.makeFile("two.bin", size: 1_000)
        let r = try h.ferry("download", h.faultURL("two.bin"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("second download completed", timeout: 10) { try state(h, id).0 == "completed" }
    }

    @Test func anAppOpenedFromAPopupOutlivesTheAgent() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        let units = h.root + "/units.jsonl"
        try h.spawn("/usr/bin/python3", [Harness.packageRoot + "/Tests/Support/systemd-manager.py", units], output: "/dev/null")
        var null = stat()
        #expect(stat("/dev/null", &null) == 0 && (null.st_mode & S_IFMT) == S_IFCHR, "the harness replaced /dev/null")
        #expect(try h.run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", "org.freedesktop.systemd1"]).status == 0)
        // A PDF viewer that stays open (as a real one does) and says who it is.
        let (env, _) = try h.pdfOpenerDesktop()
        let pids = h.root + "/viewer.pids"
        let viewer = h.root + "/viewer.sh"
        try "#!/bin/sh\necho $$ >> \(pids)\nexec tail -f /dev/null\n".write(toFile: viewer, atomically: true, encoding: .utf8)
        chmod(viewer, 0o755)
        try "[Desktop Entry]\nType=Application\nName=Viewer\nExec=\(viewer) %f\nMimeType=application/pdf;\n"
            .write(toFile: h.root + "/home/.local/share/applications/recorder.desktop", atomically: true, encoding: .utf8)
        try h.startAgent(["--popup-window-ms", "50"], environment: env)
        try Data("%PDF-1.4\n%test\n".utf8).write(to: URL(fileURLWithPath: h.www + "/paper.pdf"))
        #expect(try h.ferry("download", h.faultURL("paper.pdf"), "--wait").status == 0)
        try h.eventually("a popup") { try !h.popups().isEmpty }
        _ = try h.client().callRaw(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "dev.ferry.Test", method: "Invoke", args: [.uint32(UInt32(try h.popups()[0].id)), .string("default")])
        var pid: pid_t = 0
        try h.eventually("the viewer runs") {
            pid = pid_t((try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").first ?? "") ?? 0
            return pid > 0
        }
        defer { kill(pid, SIGKILL) }
        // The agent was asked for a scope of the viewer's own (systemd would move it out of ferryd's cgroup).
        try h.eventually("a transient scope was asked for") { FileManager.default.fileExists(atPath: units) }
        let unit = try #require(try String(contentsOfFile: units, encoding: .utf8).split(separator: "\n").first)
        #expect(unit.contains("\"name\": \"app-ferry-xdg_open-"), "\(unit)")
        #expect(unit.contains("\"PIDs\": ["))
        // What a service manager or a crash does to the agent's process group: the viewer stays.
        let agent = try #require(h.agent)
        #expect(getpgid(agent.processIdentifier) == agent.processIdentifier)
        #expect(getsid(pid) != getsid(agent.processIdentifier), "the viewer shares the agent's session")
        #expect(getpgid(pid) != agent.processIdentifier, "the viewer is in the agent's process group")
        kill(-agent.processIdentifier, SIGKILL)
        agent.waitUntilExit()
        // Alive: not gone and not a zombie waiting to be reaped.
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let status = stat.split(separator: ")").last?.split(separator: " ").first
        #expect(status != nil && status != "Z", "the viewer died with the agent: \(stat)")
    }

    @Test func busGoneSavesStateAndSaysWhy() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("b.bin", size: 400_000)
        let r = try h.ferry("download", h.faultURL("b.bin", "hold=100000"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("transfer under way") { (try h.show(id)["received"] as? Int) == 100_000 }
        h.stopBus()
        let agent = try #require(h.agent)
        try h.waitForExit(agent, "the agent")
        #expect(agent.terminationReason == .exit)
        #expect(h.agentLog.contains("the D-Bus session bus closed"), "\(h.agentLog)")
        #expect(!h.agentLog.contains("no D-Bus session bus"))
        #expect(!h.agentLog.contains("CRITICAL"))
        // The bytes are kept for the next start.
        #expect(stagingSize(h, id) == 100_000)
    }

    @Test func serverPromisingMoreThanItSendsIsResumedFromTheLastByte() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("short.bin", size: 1_000_000)
        // Content-Length says 1,000,000; the connection closes after 300,000.
        let r = try h.ferry("download", h.faultURL("short.bin", "drop=300000"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/short.bin")) == data)
        let log = try h.serverLog()
        #expect(log.map(\.sent) == [300_000, 700_000])
        #expect(log.last?.rangeStart == 300_000)
    }

    @Test func twelveDropsInARowLoseNoByteAndNoTask() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("flaky.bin", size: 1_300_000)
        // Every one of the first twelve responses breaks off after 100,000 bytes.
        let r = try h.ferry("download", h.faultURL("flaky.bin", "drop=100000&drops=12"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/flaky.bin")) == data)
        let log = try h.serverLog()
        #expect(log.count == 13)
        // Each attempt starts where the last one's bytes ended: nothing is fetched twice.
        #expect(log.map { $0.rangeStart ?? 0 } == (0..<13).map { $0 * 100_000 })
        #expect(log.reduce(0) { $0 + $1.sent } == data.count)
    }

    @Test func killedFiveTimesWhileTenDownloadsRunNothingLostOrDoubled() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--max-transfers", "10", "--max-per-host", "10"])
        var files: [String: Data] = [:]
        var requests: [Value] = []
        for i in 0..<10 {
            let name = "k\(i).bin"
            files[name] = try h.makeFile(name, size: 2_000_000)
            // 500 kB/s each: every download is still running at each of the kills.
            requests.append(.tuple([.string(h.faultURL(name, "rate=500000")), .dict([:])]))
        }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Kill"), .dict(["keep-events": .bool(false)])])
        let ids = (try c.call("CreateDownloads", [.string("dev.ferry.test.Kill"), .array(requests, elementType: "(sa{sv})")])
            .first?.arrayValue ?? []).compactMap { $0.uint64Value.map(Int64.init) }
        #expect(ids.count == 10)
        var lastSeen = 0
        for round in 0..<5 {
            // Kill once the agent has written more bytes than at the last kill.
            try h.eventually("progress before kill \(round + 1)") {
                let total = try ids.reduce(0) { $0 + (try h.show($1)["received"] as? Int ?? 0) }
                if total > lastSeen + 200_000 { lastSeen = total; return true }
                return false
            }
            h.killAgent()
            try h.startAgent(["--max-transfers", "10", "--max-per-host", "10"])
        }
        for id in ids {
            try h.eventually("task \(id) completed") { (try h.show(id)["state"] as? String) == "completed" }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).sorted() == files.keys.sorted())
        for (name, data) in files {
            #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/" + name)) == data, "\(name)")
        }
        // Each file's requests continue where the bytes on disk ended: at most what was in
        // flight at each kill is sent twice.
        for (name, data) in files {
            let log = try h.serverLog().filter { $0.path == "/" + name }
            let sent = log.reduce(0) { $0 + $1.sent }
            #expect(sent >= data.count)
            for (previous, next) in zip(log, log.dropFirst()) {
                #expect((next.rangeStart ?? 0) <= (previous.rangeStart ?? 0) + previous.sent, "\(name): \(log)")
                #expect((next.rangeStart ?? 0) >= (previous.rangeStart ?? 0), "\(name) went backwards: \(log)")
            }
        }
    }

    @Test(.enabled(if: Harness.canMakeNetworkNamespaces, "needs root to make network namespaces"))
    func networkLostAndBackContinuesFromTheBytesWithoutBurningRetries() throws {
        let h = try Harness()
        try h.isolateNetwork(linked: true)   // agent and server on two hosts joined by one link
        try h.startFaultServer()
        try h.startAgent(["--stall-timeout", "60"])   // the outage is noticed by the monitor, not a stall
        let data = try h.makeFile("trip.bin", size: 3_000_000)
        let r = try h.ferry("download", h.faultURL("trip.bin", "rate=600000"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        try h.eventually("half a megabyte in") { (try h.show(id)["received"] as? Int ?? 0) >= 500_000 }
        try h.setLink(up: false)
        try h.eventually("task waits for the network") { try state(h, id) == ("waiting", "network") }
        #expect(try h.show(id)["attempts"] as? Int == 0, "a retry was counted for the outage")
        let onDisk = try #require(stagingSize(h, id))
        try h.setLink(up: true)
        try h.eventually("completed after the network came back") { try state(h, id).0 == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/trip.bin")) == data)
        let log = try h.serverLog()
        // After the outage the transfer continued from the bytes on disk, not from zero.
        let resumed = try #require(log.last)
        #expect(resumed.rangeStart == onDisk, "\(log)")
        #expect(resumed.sent == data.count - onDisk)
    }

    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func aStoreThatCannotCommitRefusesRequestsByName() throws {
        let h = try Harness()
        try h.startFaultServer()
        _ = try h.mountSmallDisk(h.state, kilobytes: 4 * 1024)
        try h.startAgent()
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Full"), .dict([:])])
        // Something else fills the disk the store lives on.
        _ = try h.run("/bin/dd", ["if=/dev/zero", "of=\(h.state)/filler", "bs=64k"])
        let requests = (0..<2_000).map { Value.tuple([.string(h.faultURL("f\($0).bin")), .dict(["paused": .bool(true)])]) }
        let call: [Value] = [.string("dev.ferry.test.Full"), .array(requests, elementType: "(sa{sv})")]
        do {
            _ = try c.call("CreateDownloads", call)
            Issue.record("a request was acknowledged that the store could not record")
        } catch let e as FerryError {
            #expect(e.kind == .storeUnavailable, "\(e)")
            #expect(e.message.contains("nothing was queued"))
        }
        // Nothing half-recorded, and the agent still answers.
        let listed = try c.call("ListTasks", [.string("dev.ferry.test.Full"), .uint64(0), .uint32(0)]).first?.arrayValue ?? []
        #expect(listed.isEmpty)
        #expect(try c.call("GetStatus").first?.dictValue?["version"] != nil)
        // Space returns: the same request is taken.
        try FileManager.default.removeItem(atPath: h.state + "/filler")
        let ids = try c.call("CreateDownloads", call).first?.arrayValue ?? []
        #expect(ids.count == 2_000)
    }

    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func stateDiskFilledMidTransferKeepsMemoryAndStoreAgreeingAndRecovers() throws {
        let h = try Harness()
        try h.startFaultServer()
        _ = try h.mountSmallDisk(h.state, kilobytes: 8 * 1024)
        try h.startAgent(["--space-recheck", "0.3"])
        let data = try h.makeFile("mid.bin", size: 3_000_000)
        let r = try h.ferry("download", h.faultURL("mid.bin", "hold=1000000"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        try h.eventually("a third in") { (try h.show(id)["received"] as? Int) == 1_000_000 }
        // Something else fills the state disk (the download's blocks were claimed up front).
        _ = try h.run("/bin/dd", ["if=/dev/zero", "of=\(h.state)/filler", "bs=64k"])
        try h.releaseHolds()
        // Every byte arrives, the file is saved, but the completion cannot be recorded: the task
        // says so instead of pretending, and no "finished" is reported that the store lacks.
        try h.eventually("the task waits for the store") { try state(h, id) == ("waiting", "space") }
        #expect((try h.show(id)["error"] as? String)?.contains("cannot save its records") == true)
        try FileManager.default.removeItem(atPath: h.state + "/filler")
        try h.eventually("completed once the store commits") { try state(h, id).0 == "completed" }
        // One file, byte-exact; nothing fetched twice; nothing left in staging.
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads) == ["mid.bin"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/mid.bin")) == data)
        #expect(try h.serverLog().reduce(0) { $0 + $1.sent } == data.count)
        try h.eventually("staging emptied just after the completion") { stagingSize(h, id) == nil }
        // What the agent said is what its store says: a restart shows the same.
        h.killAgent()
        try h.startAgent()
        #expect(try state(h, id).0 == "completed")
    }
}
