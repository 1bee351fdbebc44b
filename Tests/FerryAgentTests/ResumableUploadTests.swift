import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// tus 1.0 uploads (`resumable: tus`) against the faultserver's tus endpoint (written from the
/// spec's examples; no tus server is installable here): dropped connections and a kill -9 of
/// the agent resume from the server's offset, so no byte reaches the server twice.
@Suite(.serialized) struct ResumableUploadTests {
    static func patches(_ h: Harness) throws -> [Harness.Request] { try h.serverLog().filter { $0.method == "PATCH" } }

    @Test func droppedConnectionsSendOnlyTheRest() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let size = 50_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("tus/", "drops=3&dropafter=12500000"), "--method", "POST",
                            "--resumable", "tus", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.method == "POST" }.count == 1)   // one upload resource, kept across the drops
        let patches = try Self.patches(h)
        #expect(Harness.eachFromTheLastEnd(patches), "\(patches)")
        #expect(patches.compactMap(\.received).reduce(0, +) == size)   // nothing sent twice
        #expect(log.filter { $0.method == "HEAD" }.count == 3)   // the offset asked after each drop
    }

    @Test func aKilledAgentResumesFromTheServersOffset() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let size = 50_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("tus/"), "--method", "POST", "--resumable", "tus", "--max-rate", "10M")
        let id = try r.taskID()
        try h.eventually("a third sent") { (try h.show(id)["received"] as? Int ?? 0) > 16_000_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 60) { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        let patches = try Self.patches(h)
        #expect(Harness.eachFromTheLastEnd(patches), "\(patches)")
        #expect(patches.compactMap(\.received).reduce(0, +) == size)
    }

    /// Left automatic, the upload asks the server (OPTIONS) and uses tus where it is offered;
    /// a server without it gets the plain request; "none" asks nothing.
    @Test func theProtocolIsFoundOutOnce() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let body = try h.makeFile("big.bin", size: 2_000_000)
        let tus = try h.ferry("upload", h.www + "/big.bin", h.faultURL("tus/", "drops=1&dropafter=500000"), "--method", "POST", "--wait")
        #expect(tus.status == 0, "\(tus.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        #expect(try Self.patches(h).compactMap(\.received).reduce(0, +) == 2_000_000)
        let plain = try h.ferry("upload", h.www + "/big.bin", h.faultURL("upload/plain.bin"), "--wait")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/plain.bin")) == body)
        let none = try h.ferry("upload", h.www + "/big.bin", h.faultURL("upload/none.bin"), "--resumable", "none", "--wait")
        #expect(none.status == 0, "\(none.stderr)")
        let options = try h.serverLog().filter { $0.method == "OPTIONS" }.map(\.path)
        #expect(options == ["/tus/", "/upload/plain.bin"], "\(options)")
    }
}

/// The crash matrix for resumable uploads: the agent aborts at each step of a tus or IETF-draft
/// upload (FERRY_CRASH_AT), restarts, and the upload completes with the server holding the exact
/// bytes, no byte received twice, one upload resource. "upgrade" is the draft's optimistic way:
/// the crash comes as the resource a 104 named is stored, mid-request.
@Suite(.serialized) struct ResumableUploadCrashTests {
    static let steps = ["upload-resource-recorded", "upload-offset-answered", "transfer-ended:2", "file-synced",
                        "completion-committed"]
    static let cases = ["tus", "ietf"].flatMap { p in steps.map { (p, $0) } } + [("upgrade", "upload-resource-recorded")]

    @Test(arguments: cases)
    func crashAtEveryStepOfAResumableUpload(protocolName: String, step: String) throws {
        let h = try Harness()
        try h.startFaultServer()
        let size = 3_000_000
        let body = try h.makeFile("big.bin", size: size)
        try h.startAgent(environment: ["FERRY_CRASH_AT": step])
        // One drop after 1 MB: the upload asks the server for its offset once.
        let path = protocolName == "tus" ? "tus/" : "ietf/"
        let query = "drops=1&dropafter=1000000" + (protocolName == "upgrade" ? "&nooptions=1" : "")
        _ = try h.ferry("upload", h.www + "/big.bin", h.faultURL(path, query), "--method", "POST",
                        "--resumable", protocolName == "upgrade" ? "auto" : protocolName)
        let agent = try #require(h.agent)
        try h.eventually("the agent crashed at \(step)", timeout: 20) { !agent.isRunning }
        #expect(agent.terminationReason == .uncaughtSignal, "the agent did not reach \(step)")
        try h.startAgent()
        let id = try #require(try AgentProxy(h.client()).allTasks(session: nil).first?.id)
        try h.eventually("completed after the restart", timeout: 40) { try h.show(id)["state"] as? String == "completed" }
        let name = protocolName == "tus" ? "tus-1" : "ietf-1"
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/" + name)) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.method == "POST" }.count == 1, "\(log)")
        let sent = log.filter { $0.method == "PATCH" || $0.method == "POST" }.compactMap(\.received).reduce(0, +)
        #expect(sent == size, "\(log)")
    }
}

/// A descriptor upload (what a sandboxed app makes) resumes from the agent's own copy: the app's
/// file is gone, the connection drops, and the rest still comes from the copy.
@Suite struct ResumableDescriptorUploadTests {
    @Test(arguments: ["tus", "ietf"])
    func aDescriptorUploadResumesFromTheAgentsCopy(protocolName: String) throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        var config = FerrySessionConfiguration.background(withIdentifier: "dev.ferry.test.\(protocolName)Fd")
        config.busAddress = h.busAddress
        config.uploadsByDescriptor = true
        let original = h.root + "/home/draft.bin"
        let payload = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try payload.write(to: URL(fileURLWithPath: original))
        let rec = Recorder()
        let session = try FerrySession(configuration: config, delegate: rec)
        let task = try session.uploadTask(with: FerryRequest(url: URL(string: h.faultURL(protocolName + "/", "drops=1&dropafter=600000"))!,
                                                             httpMethod: "POST"),
                                          fromFile: URL(fileURLWithPath: original))
        try FileManager.default.removeItem(atPath: original)
        task.resume()
        let id = task.taskIdentifier
        let calls = try rec.wait("upload done") { $0.completed(id) != nil }
        #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/\(protocolName)-1")) == payload)
        let patches = try h.serverLog().filter { $0.method == "PATCH" }
        #expect(patches.map(\.offset) == [0, 600_000] && patches.compactMap(\.received).reduce(0, +) == 1_500_000, "\(patches)")
        #expect(task.reply?.statusCode == (protocolName == "tus" ? 204 : 200))   // the draft's last answer is the target's
        session.disconnect()
    }
}

/// A tus server from PyPI (tuspyserver under uvicorn; scripts/install-deps --test installs it),
/// not the faultserver's: found out by OPTIONS, a 20 MB upload with the agent killed at about a
/// third resumes from the server's own offset, and the server ends with the exact bytes.
@Suite struct TusInteropTests {
    struct Logged: Decodable { var method: String; var path: String; var status: Int; var received: Int; var offset: Int }

    @Test func aRealTusServerGetsEachByteOnceAcrossAKill() throws {
        let h = try Harness()
        let port = try Harness.freePort()
        let files = h.root + "/tus-files", log = h.root + "/tus-server.log"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/tus-server.py", String(port), files, log],
                                errors: h.root + "/tus-server.err")
        try h.eventually("tuspyserver listening (pip install tuspyserver uvicorn: scripts/install-deps --test)") { Harness.canConnect(port) }
        try h.startAgent()
        let size = 20_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", "http://127.0.0.1:\(port)/files/", "--method", "POST", "--max-rate", "5M")
        let id = try r.taskID()
        try h.eventually("a third sent") { (try h.show(id)["received"] as? Int ?? 0) > 6_000_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 60) { try h.show(id)["state"] as? String == "completed" }
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Logged.self, from: Data($0.utf8)) }
        #expect(requests.first?.method == "OPTIONS" && requests.filter { $0.method == "POST" }.count == 1, "\(requests)")
        let patches = requests.filter { $0.method == "PATCH" }
        // Bounded PATCHes, each from where the one before ended (the one cut by the kill too).
        #expect(patches.count >= 3 && patches.first?.offset == 0, "\(patches)")
        #expect(zip(patches, patches.dropFirst()).allSatisfy { $1.offset == $0.offset + $0.received }, "\(patches)")
        #expect(patches.allSatisfy { $0.received <= PatchSize.largest }, "\(patches)")
        #expect(patches.map(\.received).reduce(0, +) == size, "\(patches)")   // no byte twice
        let stored = try FileManager.default.contentsOfDirectory(atPath: files).compactMap { FileManager.default.contents(atPath: files + "/" + $0) }
        #expect(stored.contains(body))
    }
}
/// tus as the spec and its servers speak it (issue 41, item 1): aiohttp-tus (PyPI) answers
/// OPTIONS with its tus headers only when the request says Tus-Resumable, and a conforming
/// server need not put Tus-Resumable on its OPTIONS answer (Tus-Version is the one it must).
/// Left automatic, an upload finds tus there; a file over its Tus-Max-Size is refused by name
/// before a byte is sent.
@Suite struct TusDiscoveryInteropTests {
    @Test func aSpecConformingTusServerIsFoundOut() throws {
        let h = try Harness()
        let port = try Harness.freePort()
        let files = h.root + "/aiohttp-tus"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/aiohttp-tus-server.py", String(port), files],
                                errors: h.root + "/aiohttp-tus.err")
        try h.eventually("aiohttp-tus listening (pip install aiohttp-tus: scripts/install-deps --test)") { Harness.canConnect(port) }
        try h.startAgent()
        let body = try h.makeFile("doc.bin", size: 3_000_000)
        let r = try h.ferry("upload", h.www + "/doc.bin", "http://127.0.0.1:\(port)/uploads", "--method", "POST", "--tries", "3", "--wait")
        #expect(r.status == 0, "\(r.stdout) \(r.stderr) \((try? String(contentsOfFile: h.root + "/aiohttp-tus.err", encoding: .utf8)) ?? "")")
        #expect(FileManager.default.contents(atPath: files + "/doc.bin") == body, "\((try? FileManager.default.contentsOfDirectory(atPath: files)) ?? [])")
    }

    struct Logged: Decodable { var method: String; var offset: Int; var answered: Int; var length: Int; var status: Int }

    /// aiohttp-tus as deployed with aiohttp's stock body cap (1 MiB), which reads each PATCH
    /// whole before storing it: requests too large get 413 and the upload goes on in smaller
    /// ones; the agent killed mid-upload sends again at most the one PATCH that was cut.
    @Test func aServerThatCapsAndBuffersPatchesLosesAtMostOne() throws {
        let h = try Harness()
        let port = try Harness.freePort()
        let files = h.root + "/aiohttp-tus", log = h.root + "/aiohttp-tus.log"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/aiohttp-tus-server.py", String(port), files,
                                                 "stock", log], errors: h.root + "/aiohttp-tus.err")
        try h.eventually("aiohttp-tus listening (pip install aiohttp-tus: scripts/install-deps --test)") { Harness.canConnect(port) }
        try h.startAgent()
        let size = 6_000_000
        let body = try h.makeFile("cap.bin", size: size)
        let id = try h.ferry("upload", h.www + "/cap.bin", "http://127.0.0.1:\(port)/uploads", "--method", "POST", "--resumable", "tus",
                             "--max-rate", "1M").taskID()
        var sent = 0
        try h.eventually("half sent", timeout: 30) {
            sent = try h.show(id)["received"] as? Int ?? 0
            return sent > 3_000_000
        }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 60) { try h.show(id)["state"] as? String == "completed" }
        #expect(FileManager.default.contents(atPath: files + "/cap.bin") == body)
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Logged.self, from: Data($0.utf8)) }
        #expect(requests.contains { $0.method == "PATCH" && $0.status == 413 }, "\(requests)")
        let taken = requests.filter { $0.method == "PATCH" && $0.status == 204 }
        #expect(taken.allSatisfy { $0.length <= 1 << 20 } && taken.map(\.length).reduce(0, +) == size, "\(requests)")
        // After the restart the agent asks the server what it has: at most one PATCH short of
        // what had been sent when the agent was killed.
        let kept = try #require(requests.last { $0.method == "HEAD" }?.answered, "\(requests)")
        #expect(kept > 0 && sent - kept <= 1 << 20, "sent \(sent), the server kept \(kept): \(requests)")
    }
}


/// The same from inside a sandbox (bubblewrap's fake Flatpak): the app hands over a descriptor,
/// the agent uploads its own copy with the IETF draft, the connection drops, and the rest goes
/// from the copy at the server's offset; the server's reply lands in the app's inbox.
@Suite struct SandboxedResumableUploadTests {
    @Test(.needsBubblewrap)
    func aSandboxedAppsUploadResumesFromTheAgentsCopy() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let appID = "dev.ferry.test.SandboxedUpload"
        let app = try FakeFlatpak(h, id: appID)
        let session = appID + ".up"
        #expect(try app.call("OpenSession", session, "{}").status == 0)
        let video = app.home + "/video.bin"
        let payload = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try payload.write(to: URL(fileURLWithPath: video))
        let script = """
            import dbus, os, sys
            agent = dbus.Interface(dbus.SessionBus().get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
            print(agent.CreateUploadFromFd(sys.argv[1], sys.argv[2], dbus.types.UnixFd(os.open(sys.argv[3], os.O_RDONLY)), {}))
            """
        let sent = try app.run(["/usr/bin/python3", "-c", script, session, h.faultURL("ietf/", "drops=1&dropafter=1000000"), video])
        let id = try #require(Int64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(sent.stdout) \(sent.stderr)")
        try h.eventually("the upload") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-1")) == payload)
        let log = try h.serverLog()
        #expect(log.filter { $0.method == "PATCH" }.map(\.offset) == [0, 1_000_000], "\(log)")
        #expect(log.filter { $0.method == "PATCH" }.compactMap(\.received).reduce(0, +) == payload.count)
        // The reply is in the app's own inbox, where it can read it.
        let reply = try #require(try h.show(id)["reply-file"] as? String)
        #expect(reply.hasPrefix(app.home), "\(reply)")
        #expect(try String(contentsOfFile: reply, encoding: .utf8).contains("\"received\": 3000000"))
    }
}
