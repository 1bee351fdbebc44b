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
        // The CLI names a task's fields as the API does (the XML's keys of the task info).
        // (and adds when a waiting task goes on: start-at, next-attempt).
        let apiKeys = Set(TaskInfo.Key.allCases.map(\.rawValue)).union(["start-at", "next-attempt"])
        #expect(Set(done.keys).subtracting(apiKeys).isEmpty, "\(Set(done.keys).subtracting(apiKeys))")
        let list = try h.run(Harness.ferry, ["list", "--json"])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list.stdout)")
        #expect(listed.count == 2 && listed.allSatisfy { Set($0.keys).isSubset(of: apiKeys) })
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

    /// The CLI writes its JSON itself (no Foundation in it): the text is what Foundation's
    /// JSONSerialization writes for the same value with the options it used before, byte for
    /// byte, for each shape it prints (nulls, numbers, fractions, booleans, nested objects,
    /// arrays, empty ones, a header field map, escapes).
    @Test func theTextIsWhatFoundationWrites() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let file = h.root + "/up \"quoted\".txt"
        try "hello".write(toFile: file, atomically: true, encoding: .utf8)
        let up = try h.run(Harness.ferry, ["upload", "--json", "--wait", "--priority", "0.75",
                                           "--description", "a/b\ttab é", file, h.faultURL("upload/up.txt")])
        let queued = try h.run(Harness.ferry, ["download", "--json", "--priority", "1", "--start-at", "23:59",
                                               h.faultURL("x.bin")])
        let texts = [up.stdout, queued.stdout, try h.run(Harness.ferry, ["status", "--json"]).stdout,
                     try h.run(Harness.ferry, ["config", "list", "--json"]).stdout,
                     try h.run(Harness.ferry, ["clear", "--json"]).stdout]
        #expect(up.stdout.contains("\"reply-headers\" : {") && queued.stdout.contains("\"expected\" : null"))
        for text in texts {
            let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
            let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let foundation = try JSONSerialization.data(withJSONObject: value, options: options)
            #expect(String(decoding: foundation, as: UTF8.self) + "\n" == text)
        }
    }
}
