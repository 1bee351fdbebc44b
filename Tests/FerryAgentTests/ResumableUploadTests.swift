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
        let size = 3_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("tus/", "drops=2&dropafter=1000000"), "--method", "POST",
                            "--resumable", "tus", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        let log = try h.serverLog()
        #expect(log.filter { $0.method == "POST" }.count == 1)   // one upload resource, kept across the drops
        let patches = try Self.patches(h)
        #expect(patches.map(\.offset) == [0, 1_000_000, 2_000_000], "\(patches)")
        #expect(patches.compactMap(\.received).reduce(0, +) == size)   // nothing sent twice
        #expect(log.filter { $0.method == "HEAD" }.count == 2)   // the offset asked after each drop
    }

    @Test func aKilledAgentResumesFromTheServersOffset() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let size = 4_000_000
        let body = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("upload", h.www + "/big.bin", h.faultURL("tus/"), "--method", "POST", "--resumable", "tus", "--max-rate", "1M")
        let id = try #require(Int64(r.stdout.split(separator: "\n").first ?? ""), "\(r.stderr)")
        try h.eventually("a third sent") { (try h.show(id)["received"] as? Int ?? 0) > 1_400_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 40) { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        let patches = try Self.patches(h)
        #expect(patches.count == 2 && (patches.last?.offset ?? 0) > 1_000_000, "\(patches)")
        #expect(patches.compactMap(\.received).reduce(0, +) == size)
    }

    /// Without the option the same server is not asked anything resumable: a plain POST.
    @Test func theOptionIsCheckedByName() throws {
        let h = try Harness()
        try h.startAgent()
        try h.makeFile("f.bin", size: 10)
        let r = try h.ferry("upload", h.www + "/f.bin", "http://127.0.0.1:9/x", "--resumable", "ietf")
        #expect(r.status == 2 && r.stderr.contains("resumable") && r.stderr.contains("tus or none"), "\(r.stderr)")
    }
}
