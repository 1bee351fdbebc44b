import FerryBus
import FerryCore
import Foundation
import Testing

/// Every command that prints something machine-useful has --json; --help has examples.
@Suite(.serialized) struct JSONOutputTests {
    static func object(_ r: Harness.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout) \(r.stderr)")
    }

    @Test func downloadUploadRemoveAndClearPrintJSON() throws {
        let h = try Harness()
        try h.makeFile("j.bin", size: 5_000)
        try h.startFaultServer()
        try h.startAgent()
        let queued = try Self.object(try h.run(Harness.ferry, ["download", "--json", "--start-at", "23:59", h.faultURL("j.bin")]))
        #expect(queued["state"] as? String == "waiting" && queued["reason"] as? String == "scheduled")
        let done = try Self.object(try h.run(Harness.ferry, ["download", "--json", "--wait", h.faultURL("j.bin")]))
        #expect(done["state"] as? String == "completed")
        #expect((done["file"] as? String)?.hasSuffix("/j.bin") == true)
        let file = h.root + "/up.txt"
        try "hello".write(toFile: file, atomically: true, encoding: .utf8)
        let up = try Self.object(try h.run(Harness.ferry, ["upload", "--json", "--wait", file, h.faultURL("upload/up.txt")]))
        #expect(up["kind"] as? String == "upload" && up["state"] as? String == "completed")

        let id = try #require(done["id"] as? Int)
        let removed = try Self.object(try h.run(Harness.ferry, ["remove", "--json", String(id)]))
        #expect(removed["removed"] as? [Int] == [id])
        let cleared = try Self.object(try h.run(Harness.ferry, ["clear", "--json"]))
        #expect(cleared["removed"] as? Int == 1)   // the upload

        for command in ["download", "upload"] {
            #expect(try h.run(Harness.ferry, [command, "--help"]).stdout.contains("Examples:\n  ferry \(command) "))
        }
    }
}
