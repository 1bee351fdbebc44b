import Ferry
import FerryBus
import FerryCore
import Foundation
import Testing

/// The server's reply to an upload (the JSON naming what it made) reaches the app, the CLI and
/// GetTask; a long one is cut at 1 MiB and says so; an acknowledged reply's file goes.
@Suite(.serialized) struct UploadReplyTests {
    /// The library: the reply's status and bytes are on the task when didCompleteWithError comes,
    /// and the reply's file leaves the inbox once the events are acknowledged.
    @Test func theAppGetsTheServersReply() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("payload.bin", size: 100_000)
        let rec = Recorder()
        var config = FerrySessionConfiguration.background(withIdentifier: "dev.ferry.test.Reply")
        config.busAddress = h.busAddress
        let session = try FerrySession(configuration: config, delegate: rec)
        let task = try session.uploadTask(with: FerryRequest(url: URL(string: h.faultURL("upload/p.bin"))!, httpMethod: "POST"),
                                          fromFile: URL(fileURLWithPath: h.www + "/payload.bin"))
        task.resume()
        let id = task.taskIdentifier
        try rec.wait("upload done") { $0.completed(id) != nil }
        let reply = try #require(task.reply)
        #expect(reply.statusCode == 201 && !reply.isCut)
        #expect(String(decoding: reply.data, as: UTF8.self) == "{\"stored\": \"p.bin\", \"received\": 100000}\n")
        // Its header fields too, but no cookie (a credential).
        #expect(reply.value(forHTTPHeaderField: "Location") == "/stored/p.bin" && reply.headers["content-type"] == "application/json")
        #expect(reply.headers["set-cookie"] == nil && !reply.headers.isEmpty)
        let info = try AgentProxy(h.client()).getTask(task: Int64(id))
        #expect(info.replyStatus == 201 && info.replyHeaders?["location"] == "/stored/p.bin")
        let file = try #require(info.replyFile)
        #expect(file.hasPrefix(StateFolder(h.state).inbox("dev.ferry.test.Reply")))
        try h.eventually("the reply's file gone once acknowledged") { !FileManager.default.fileExists(atPath: file) }
        session.disconnect()
    }

    /// The CLI: `--wait` prints the reply after the task id, or writes it to `--reply FILE`;
    /// the status goes to stderr; `ferry show --json` has it. Against httpbin's /anything, which
    /// echoes the request.
    @Test func theCLIPrintsTheReply() throws {
        let h = try Harness()
        let (port, _) = try RealServerTests.startHTTPBin(h)
        try h.startAgent()
        try "hello, server".write(toFile: h.root + "/note.txt", atomically: true, encoding: .utf8)
        let url = "http://127.0.0.1:\(port)/anything/notes"
        let printed = try h.ferry("upload", h.root + "/note.txt", url, "--method", "POST", "--wait")
        #expect(printed.status == 0, "\(printed.stderr)")
        let lines = printed.stdout.split(separator: "\n", maxSplits: 1)
        let id = try #require(Int64(lines.first ?? ""))
        #expect(lines.count == 2 && lines[1].contains("\"data\": \"hello, server\"") && lines[1].contains("application/octet-stream") && lines[1].contains("\"method\": \"POST\""),
                "\(printed.stdout.debugDescription)")
        #expect(printed.stderr.contains("the server answered HTTP 200"), "\(printed.stderr)")
        let shown = try h.show(id)
        #expect(shown["reply-status"] as? Int == 200)
        #expect((shown["reply-headers"] as? [String: Any])?["content-type"] as? String == "application/json", "\(shown)")
        #expect((shown["reply-file"] as? String).map { FileManager.default.fileExists(atPath: $0) } == true)

        let saved = try h.ferry("upload", h.root + "/note.txt", url, "--method", "POST", "--wait", "--reply", h.root + "/reply.json")
        #expect(saved.status == 0 && saved.stdout.split(separator: "\n").count == 1, "\(saved.stdout)")
        #expect(try String(contentsOfFile: h.root + "/reply.json", encoding: .utf8).contains("\"url\": \"\(url)\""))
    }

    /// A reply longer than 1 MiB is kept up to 1 MiB and marked cut; the upload still completes.
    @Test func aLongReplyIsCutAndMarked() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("small.bin", size: 1_000)
        let r = try h.ferry("upload", h.www + "/small.bin", h.faultURL("upload/s.bin", "replypad=1500000"), "--wait", "--reply", h.root + "/r")
        #expect(r.status == 0 && r.stderr.contains("cut at 1 MiB"), "\(r.stderr)")
        let id = try r.taskID()
        #expect(try h.show(id)["reply-cut"] as? Bool == true)
        #expect((try FileManager.default.attributesOfItem(atPath: h.root + "/r")[.size] as? Int) == 1 << 20)
    }
}

/// The file an upload sends is checked against what it was when queued: changed before the
/// upload starts, nothing is sent; changed while it is sent, the task fails instead of
/// completing with a mix on the server.
@Suite(.serialized) struct UploadFileChangeTests {
    @Test func aFileChangedBeforeItsUploadIsNotSent() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("doc.bin", size: 50_000)
        let r = try h.ferry("upload", h.www + "/doc.bin", h.faultURL("upload/doc.bin"), "--start-at", "2099-01-01T00:00:00Z")
        let id = try r.taskID()
        try Data(repeating: 7, count: 60_000).write(to: URL(fileURLWithPath: h.www + "/doc.bin"))
        #expect(try h.ferry("resume", String(id)).status == 0)
        try h.eventually("failed") { try h.show(id)["state"] as? String == "failed" }
        let error = try h.show(id)["error"] as? String ?? ""
        #expect(error.contains("changed since it was queued (50000 bytes then, 60000 now)"), "\(error)")
        #expect(try h.serverLog().filter { $0.path == "/upload/doc.bin" }.isEmpty)
    }

    @Test func aFileChangedWhileItIsSentFailsTheTask() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("big.bin", size: 400_000)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("upload/big.bin"), "--max-rate", "100K")
        let id = try r.taskID()
        try h.eventually("sending") { (try h.show(id)["received"] as? Int ?? 0) > 50_000 }
        // Rewritten in place, as an editor saving over it would: same size, new bytes.
        let handle = try #require(FileHandle(forWritingAtPath: h.www + "/big.bin"))
        try handle.write(contentsOf: Data(repeating: 1, count: 400_000))
        try handle.close()
        try h.eventually("failed", timeout: 30) { try h.show(id)["state"] as? String == "failed" }
        #expect((try h.show(id)["error"] as? String)?.contains("changed while it was being sent") == true)
    }
}
