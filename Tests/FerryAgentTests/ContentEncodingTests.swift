import FerryCore
import Foundation
import Testing

/// A server that sends a body content-encoded although the agent asked for none: the user
/// gets the document, as a browser saves it, unless it is a compressed file the server
/// labels so (nginx here set up as Apache's `AddEncoding` leaves `.gz` files), kept byte for byte.
@Suite(.serialized) struct ContentEncodingTests {
    /// httpbin's /gzip always answers gzip-encoded JSON: saved decoded.
    @Test func anEncodedDocumentIsSavedDecoded() throws {
        let h = try Harness()
        let (port, _) = try RealServerTests.startHTTPBin(h)
        try h.startAgent()
        let out = h.root + "/gzip.json"
        let r = try h.run(Harness.ferry, ["download", "--wait", "--output", out, "http://127.0.0.1:\(port)/gzip"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(), as: UTF8.self)
        #expect(text.contains("\"gzipped\": true"), "saved: \(text.prefix(40))")
    }

    /// nginx labelling files as gzip-encoded: a JSON document is decoded; a `.tar.gz` and a
    /// file typed `application/gzip` (asked for again, as sent, after its first answer) are
    /// the server's bytes exactly.
    @Test func aCompressedFileLabelledAsEncodedStaysByteExact() throws {
        let h = try Harness()
        try h.startNginx()
        let document = Data(String(repeating: "{\"ferry\": \"document\"}\n", count: 2_000).utf8)
        for folder in ["labelled", "typed"] { try FileManager.default.createDirectory(atPath: h.www + "/" + folder, withIntermediateDirectories: true) }
        try document.write(to: URL(fileURLWithPath: h.root + "/doc.json"))
        let zipped = try h.run("/bin/gzip", ["-kn9", h.root + "/doc.json"])
        #expect(zipped.status == 0)
        let gz = try Data(contentsOf: URL(fileURLWithPath: h.root + "/doc.json.gz"))
        try gz.write(to: URL(fileURLWithPath: h.www + "/labelled/doc.json"))
        try gz.write(to: URL(fileURLWithPath: h.www + "/labelled/backup.tar.gz"))
        try gz.write(to: URL(fileURLWithPath: h.www + "/typed/blob"))
        try h.startAgent()
        let base = "http://127.0.0.1:\(h.nginxPort)"
        func fetch(_ path: String) throws -> Data {
            let out = h.root + "/got-" + path.replacingOccurrences(of: "/", with: "_")
            let r = try h.run(Harness.ferry, ["download", "--wait", "--output", out, base + path])
            #expect(r.status == 0, "\(path): \(r.stderr)")
            return (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data()
        }
        #expect(try fetch("/labelled/doc.json") == document)
        #expect(try fetch("/labelled/backup.tar.gz") == gz)
        #expect(try fetch("/typed/blob") == gz)
        let log = try String(contentsOfFile: h.root + "/nginx/logs/access.log", encoding: .utf8)
        #expect(log.components(separatedBy: "GET /typed/blob").count - 1 == 2, "\(log)")
        #expect(log.components(separatedBy: "GET /labelled/backup.tar.gz").count - 1 == 1)
    }
}
