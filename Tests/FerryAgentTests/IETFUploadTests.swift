import FerryBus
import Foundation
import Testing

/// Uploads with the IETF draft Resumable Uploads for HTTP (interop version 8) against the
/// faultserver's /ietf/ endpoint (written from the draft's examples: no server of the draft is
/// installable here). 50 MB uploads dropped several times, or with the agent killed, finish
/// with the server holding the exact bytes and no byte received twice.
@Suite(.serialized) struct IETFUploadTests {
    static let size = 50_000_000

    static func received(_ log: [Harness.Request]) -> Int {
        log.filter { $0.method == "PATCH" || $0.path == "/ietf/" }.compactMap(\.received).reduce(0, +)
    }

    /// `--resumable ietf`: an empty request makes the resource (careful creation), then PATCHes
    /// send the file; after each of three drops a HEAD asks the offset and only the rest goes.
    @Test func droppedConnectionsSendOnlyTheRest() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let body = try h.makeFile("big.bin", size: Self.size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("ietf/", "drops=3&dropafter=12500000"),
                            "--resumable", "ietf", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"received\": 50000000"), "the final PATCH's answer is the reply: \(r.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-1")) == body)
        let log = try h.serverLog()
        let creations = log.filter { $0.path == "/ietf/" }
        #expect(creations.map(\.method) == ["PUT"] && creations.first?.received == 0, "\(creations)")   // the task's method, no body
        let patches = log.filter { $0.method == "PATCH" }
        #expect(Harness.eachFromTheLastEnd(patches), "\(patches)")
        #expect(Self.received(log) == Self.size)   // nothing sent twice
        #expect(log.filter { $0.method == "HEAD" }.count == 3)
        #expect(log.filter { $0.method == "OPTIONS" }.isEmpty)   // forced: nothing asked
    }

    /// Left automatic, OPTIONS finds Accept-Patch: application/partial-upload; a kill -9 of the
    /// agent at a third resumes from the server's offset after the restart.
    @Test func aKilledAgentResumesFromTheServersOffset() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let body = try h.makeFile("big.bin", size: Self.size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("ietf/"), "--max-rate", "10M")
        let id = try r.taskID()
        try h.eventually("a third sent") { (try h.show(id)["received"] as? Int ?? 0) > 16_000_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 60) { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-1")) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.method == "OPTIONS" }.count == 1)
        let patches = log.filter { $0.method == "PATCH" }
        #expect(Harness.eachFromTheLastEnd(patches), "\(patches)")
        #expect(Self.received(log) == Self.size)
    }

    /// A server that does not answer OPTIONS but sends a 104 with the resource's URL while the
    /// plain request is under way (the draft's optimistic creation): the task resumes there.
    @Test func aPlainUploadResumesWhereA104NamedTheResource() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let body = try h.makeFile("big.bin", size: Self.size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("ietf/", "nooptions=1&drops=1&dropafter=20000000"),
                            "--method", "POST", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-1")) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.path == "/ietf/" && $0.method == "POST" }.map(\.received) == [20_000_000], "\(log)")
        #expect(log.filter { $0.method == "PATCH" }.first?.offset == 20_000_000, "\(log)")
        #expect(Self.received(log) == Self.size)
    }

    /// Without the 104 (a server that cannot send interim answers, or one that speaks neither
    /// protocol) a dropped upload starts again from zero, as any plain upload does.
    @Test func withoutAnAnnouncementADroppedUploadStartsAgain() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let size = 3_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("ietf/", "nooptions=1&no104=1&drops=1&dropafter=1000000"),
                            "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-2")) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.path == "/ietf/" && $0.method == "PUT" }.map(\.received) == [1_000_000, size], "\(log)")
        #expect(log.filter { $0.method == "HEAD" || $0.method == "PATCH" }.isEmpty)
    }

    @Test func theOptionIsCheckedByName() throws {
        let h = try Harness()
        try h.startAgent()
        try h.makeFile("f.bin", size: 10)
        let r = try h.ferry("upload", h.www + "/f.bin", "http://127.0.0.1:9/x", "--resumable", "ietf-9")
        #expect(r.status == 2 && r.stderr.contains("resumable") && r.stderr.contains("auto, tus, ietf or none"), "\(r.stderr)")
    }
}
