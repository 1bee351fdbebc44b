import FerryCore
import Foundation
import Testing

/// Discovery that gives up, against the tus servers from PyPI that made it necessary (issue 58,
/// items 5 and 6): fastapi-tusd, whose OPTIONS handler crashes, and drf-tus in a default Django
/// deployment, which answers OPTIONS with its tus fields in a JSON body and a body over 2.5 MB
/// with 400.
@Suite struct TusDiscoveryDoubtTests {
    struct Logged: Decodable { var method: String; var offset: Int; var length: Int; var status: Int }

    /// Files under `folder` (any depth) whose bytes are `body`.
    static func stored(_ body: Data, under folder: String) -> Bool {
        let found = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        return found.contains { FileManager.default.contents(atPath: folder + "/" + $0) == body }
    }

    @Test func aServerWhoseOptionsCrashesGetsTheUploadThenAHint() throws {
        let h = try Harness()
        let port = try Harness.freePort()
        let store = h.root + "/fastapi-tusd"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/fastapi-tusd-server.py", String(port), store],
                                errors: h.root + "/fastapi-tusd.err")
        try h.eventually("fastapi-tusd listening (pip install fastapi-tusd: scripts/install-deps --test)") { Harness.canConnect(port) }
        try h.startAgent()
        let body = try h.makeFile("doc.bin", size: 300_000)
        let url = "http://127.0.0.1:\(port)/files"
        // Left automatic: three OPTIONS without an answer, then the upload itself, which this
        // server refuses (tus only); the failure says why it went plain and what forces tus.
        let auto = try h.ferry("upload", h.www + "/doc.bin", url, "--method", "POST", "--tries", "8", "--wait")
        #expect(auto.status == 1, "\(auto.stdout) \(auto.stderr)")
        #expect(auto.stderr.contains("no answer 3 times") && auto.stderr.contains("--resumable tus"), "\(auto.stderr)")
        let forced = try h.ferry("upload", h.www + "/doc.bin", url, "--method", "POST", "--resumable", "tus", "--wait")
        #expect(forced.status == 0, "\(forced.stdout) \(forced.stderr)")
        #expect(Self.stored(body, under: store))
    }

    /// drf-tus: left automatic, the plain upload's 405 comes with the hint; with tus forced, a
    /// 6 MB file goes through Django's 2.5 MB cap: the first 4 MiB PATCH gets 400, the rest go
    /// in 2 MiB ones.
    @Test func drfTusIsNamedAndItsBodyCapIsWorkedAround() throws {
        let h = try Harness()
        let port = try Harness.freePort()
        let root = h.root + "/drf-tus", log = h.root + "/drf-tus.log"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/drf-tus-server.py", String(port), root, log],
                                errors: h.root + "/drf-tus.err")
        try h.eventually("drf-tus listening (pip install drf-tus: scripts/install-deps --test)") { Harness.canConnect(port) }
        try h.startAgent()
        let body = try h.makeFile("scan.bin", size: 6_000_000)
        let url = "http://127.0.0.1:\(port)/files/"
        let auto = try h.ferry("upload", h.www + "/scan.bin", url, "--wait")
        #expect(auto.status == 1, "\(auto.stdout) \(auto.stderr)")
        #expect(auto.stderr.contains("HTTP 405") && auto.stderr.contains("Tus-Resumable") && auto.stderr.contains("--resumable tus"),
                "\(auto.stderr)")
        let forced = try h.ferry("upload", h.www + "/scan.bin", url, "--method", "POST", "--resumable", "tus", "--wait")
        #expect(forced.status == 0, "\(forced.stdout) \(forced.stderr) \((try? String(contentsOfFile: h.root + "/drf-tus.err", encoding: .utf8))?.suffix(2000) ?? "")")
        let patches = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Logged.self, from: Data($0.utf8)) }.filter { $0.method == "PATCH" }
        #expect(patches.first?.length == 4 << 20 && patches.first?.status == 400, "\(patches)")
        #expect(patches.dropFirst().allSatisfy { $0.length <= 2 << 20 && $0.status == 204 }, "\(patches)")
        #expect(Self.stored(body, under: root + "/media"), "\((try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? [])")
    }
}
