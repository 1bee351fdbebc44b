import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Against httpbin (PyPI), the widely used third-party HTTP test server, as a user meets real
/// servers: Digest authentication with credentials in the URL, an unquoted ETag on resume.
@Suite(.serialized) struct RealServerTests {
    /// Starts httpbin on a free port (Werkzeug's server, one thread a request); its port and
    /// the file of its access log.
    static func startHTTPBin(_ h: Harness) throws -> (port: Int, log: String) {
        let port = try Harness.freePort()
        let log = h.root + "/httpbin.log"
        let script = "import sys; from httpbin import app; from werkzeug.serving import run_simple; "
            + "run_simple('127.0.0.1', \(port), app, threaded=True)"
        let p = try h.spawnWaitable("/usr/bin/env", ["python3", "-c", script], output: log, errors: log)
        _ = p
        try h.eventually("httpbin listening (pip install httpbin: scripts/install-deps --test)") { Harness.canConnect(port) }
        return (port, log)
    }

    static func taskID(_ r: Harness.Result) throws -> Int64 {
        try #require(Int64(r.stdout.split(separator: "\n").first ?? ""), "\(r.stdout) \(r.stderr)")
    }

    /// Credentials in the URL work for Digest as for Basic: curl finishes its own challenge
    /// round (a first 401 is not the answer); wrong ones fail, naming authentication.
    @Test func digestWithCredentialsInTheURL() throws {
        let h = try Harness()
        let (port, _) = try Self.startHTTPBin(h)
        try h.startAgent()
        let good = try h.run(Harness.ferry, ["download", "--wait", "--output", h.root + "/digest.json",
                                             "http://user:pass@127.0.0.1:\(port)/digest-auth/auth/user/pass"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(try String(contentsOfFile: h.root + "/digest.json", encoding: .utf8).contains("\"authenticated\": true"))
        let basic = try h.run(Harness.ferry, ["download", "--wait", "--output", h.root + "/basic.json",
                                              "http://user:pass@127.0.0.1:\(port)/basic-auth/user/pass"])
        #expect(basic.status == 0, "\(basic.stderr)")
        let wrong = try h.run(Harness.ferry, ["download", "--wait", "--output", h.root + "/wrong.json",
                                              "http://user:nope@127.0.0.1:\(port)/digest-auth/auth/user/pass"])
        #expect(wrong.status == 1 && wrong.stderr.contains("401"), "\(wrong.stderr)")
        #expect(!h.agentLog.contains("pass@") && !h.agentLog.contains("nope"))
    }

    /// httpbin's /range answers `ETag: range102400` (no quotes): a download killed half way
    /// resumes from its bytes (the second request is answered 206), not from zero.
    @Test func anUnquotedETagStillResumes() throws {
        let h = try Harness()
        let (port, log) = try Self.startHTTPBin(h)
        try h.startAgent()
        let url = "http://127.0.0.1:\(port)/range/102400?duration=6&chunk_size=1024"
        let id = try Self.taskID(try h.ferry("download", url))
        try h.eventually("a third received") { (try h.show(id)["received"] as? Int ?? 0) >= 34_000 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed", timeout: 30) { try h.show(id)["state"] as? String == "completed" }
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("GET /range/") }
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.last?.contains("\" 206 ") == true, "\(requests)")
    }
}
