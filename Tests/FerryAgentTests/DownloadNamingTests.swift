import FerryCore
import Foundation
import Testing

/// Real servers, round 3 (issue 58): the names browsers give a download, and validators by the
/// RFC. Against moto's S3 behind Flask, Starlette, and nginx.
@Suite(.serialized) struct DownloadNamingTests {
    /// Tests/Support/presigned-links.py: Flask's /files/42 redirects to a presigned S3 link on
    /// moto; Starlette's /video is video/webm, /rates names itself in ISO-8859-1.
    func startServers(_ h: Harness) throws -> (flask: Int, starlette: Int) {
        let ports = h.root + "/presigned.ports"
        _ = try h.spawnWaitable(
            "/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/presigned-links.py", ports],
            output: h.root + "/presigned.log", errors: h.root + "/presigned.log")
        try h.eventually("moto, Flask and Starlette listening (scripts/install-deps --test)") {
            FileManager.default.fileExists(atPath: ports)
        }
        let p = try String(contentsOfFile: ports, encoding: .utf8).split(separator: " ").compactMap {
            Int($0.trimmingSpaces)
        }
        return (p[0], p[1])
    }

    @Test func aRedirectedDownloadIsNamedAfterTheFinalURL() throws {
        let h = try Harness()
        let (flask, _) = try startServers(h)
        try h.startAgent()
        let r = try h.ferry("download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(flask)/files/42")
        #expect(r.status == 0, "\(r.stderr)")
        let saved = h.root + "/got/Invoice 2026-0042.pdf"
        #expect(try Data(contentsOf: URL(fileURLWithPath: saved)).starts(with: Data("%PDF-1.4\n%invoice 42".utf8)))
        #expect(r.stderr.contains("saved to \(saved)"), "\(r.stderr)")
    }

    @Test func aNameWithoutExtensionGetsTheOneItsTypeImplies() throws {
        let h = try Harness()
        let (_, starlette) = try startServers(h)
        try h.startAgent()
        let r = try h.ferry("download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(starlette)/video")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.root + "/got/video.webm"), "\(r.stderr)")
    }

    @Test func anISO88591FilenameIsDecoded() throws {
        let h = try Harness()
        let (_, starlette) = try startServers(h)
        try h.startAgent()
        let r = try h.ferry("download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(starlette)/rates")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.root + "/got/£ rates.txt"), "\(r.stderr)")
    }

    /// nginx with a weak ETag and Last-Modified: after kill -9 the download starts over, with
    /// no If-Range date (RFC 9110 §13.1.5). With a strong ETag it resumes (the control).
    @Test(arguments: ["weak", "strong"])
    func aWeakETagIsNeverValidatedByADate(_ kind: String) throws {
        let h = try Harness()
        try h.startNginx(locations: """
            location /weak/ { etag off; add_header ETag 'W/"5f3a-photos"' always; limit_rate 100k; }
            location /strong/ { limit_rate 100k; }
            """)
        try FileManager.default.createDirectory(atPath: h.www + "/\(kind)", withIntermediateDirectories: true)
        let body = try h.makeFile("\(kind)/photos.tar", size: 600_000)
        try h.startAgent()
        let id = try h.ferry("download", "--dir", h.root + "/got", "http://127.0.0.1:\(h.nginxPort)/\(kind)/photos.tar")
            .taskID()
        try h.eventually("the first bytes") { ((try h.show(id)["received"] as? Int) ?? 0) >= 100_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("the file", timeout: 60) { (try h.show(id)["state"] as? String) == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/got/photos.tar")) == body)
        let requests = try String(contentsOfFile: h.root + "/nginx/logs/validators.log", encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
            .filter { $0.first == "/\(kind)/photos.tar" }
        #expect(requests.count == 2, "\(requests)")
        if kind == "weak" {
            #expect(requests.last?[1] == "-" && requests.last?[2] == "-", "started over: \(requests)")
        } else {
            // nginx logs the tag's quotes as \x22.
            #expect(requests.last?[1].hasPrefix("bytes=") == true && requests.last?[2].hasPrefix("\\x22") == true,
                    "resumed with the strong tag: \(requests)")
        }
    }
}
