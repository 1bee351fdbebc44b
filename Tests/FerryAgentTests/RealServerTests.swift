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
        let url = "http://127.0.0.1:\(port)/range/102400?duration=10&chunk_size=4096"
        let id = try h.ferry("download", url).taskID()
        try h.eventually("a quarter received") { (try h.show(id)["received"] as? Int ?? 0) >= 25_600 }
        h.killAgent()
        try h.startAgent()
        try h.eventually("completed", timeout: 30) { try h.show(id)["state"] as? String == "completed" }
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("GET /range/") }
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.last?.contains("\" 206 ") == true, "\(requests)")
    }

    /// A session with `cookies`: Set-Cookie is kept and sent back (after a redirect, on later
    /// tasks, after a restart), in a 0600 file in the state folder, gone when the session is
    /// invalidated; a session without it sends none.
    @Test func aSessionsCookiesAreKeptAndSentBack() throws {
        let h = try Harness()
        let (port, _) = try Self.startHTTPBin(h)
        try h.startAgent()
        var c = try h.client()
        let base = "http://127.0.0.1:\(port)"
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Jar"), .dict(["cookies": .bool(true), "keep-events": .bool(false)])])
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Plain"), .dict(["keep-events": .bool(false)])])
        func fetch(_ session: String, _ path: String, _ name: String) throws -> String {
            let out = h.root + "/" + name
            let id = try #require(try c.call("CreateDownload", [.string(session), .string(base + path),
                                                               .dict(["output": .string(out)])]).first?.int64Value)
            try h.eventually("\(name) completed") { try h.show(id)["state"] as? String == "completed" }
            return try String(contentsOfFile: out, encoding: .utf8)
        }
        // /cookies/set answers with Set-Cookie and a redirect to /cookies, which echoes them.
        #expect(try fetch("dev.ferry.test.Jar", "/cookies/set?flavour=oat", "set.json").contains("\"flavour\": \"oat\""))
        #expect(try fetch("dev.ferry.test.Jar", "/cookies", "again.json").contains("\"flavour\": \"oat\""))
        #expect(!(try fetch("dev.ferry.test.Plain", "/cookies", "plain.json").contains("oat")))
        let jar = h.state + "/cookies/dev.ferry.test.Jar.txt"
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: jar)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        h.killAgent()
        try h.startAgent()
        c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Jar"), .dict(["cookies": .bool(true), "keep-events": .bool(false)])])
        #expect(try fetch("dev.ferry.test.Jar", "/cookies", "restarted.json").contains("\"flavour\": \"oat\""))
        _ = try c.call("InvalidateSession", [.string("dev.ferry.test.Jar"), .bool(false)])
        try h.eventually("the cookie file gone with the session") { !FileManager.default.fileExists(atPath: jar) }
    }

    /// What real servers send, from httpbin: a chain of redirects, a chunked body with no
    /// length, slow first bytes, an RFC 8187 file name, a client error and a server error.
    @Test func theOddResponsesRealServersSend() throws {
        let h = try Harness()
        let (port, _) = try Self.startHTTPBin(h)
        try h.startAgent()
        let base = "http://127.0.0.1:\(port)"
        func download(_ path: String, _ extra: [String] = []) throws -> Harness.Result {
            try h.run(Harness.ferry, ["download", "--wait", "--dir", h.root + "/got"] + extra + [base + path])
        }
        #expect(try download("/redirect/3").status == 0)
        let chunked = try download("/stream-bytes/50000?chunk_size=1000&seed=1")
        #expect(chunked.status == 0, "\(chunked.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: h.root + "/got/50000")[.size] as? Int) == 50_000)
        #expect(try download("/delay/2").status == 0)
        let named = try download("/response-headers?Content-Disposition=attachment%3B%20filename%2A%3DUTF-8%27%27na%25C3%25AFve.txt")
        #expect(named.status == 0, "\(named.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.root + "/got/naïve.txt"))
        let teapot = try download("/status/418")
        #expect(teapot.status == 1 && teapot.stderr.contains("418"), "\(teapot.stderr)")
        let unavailable = try download("/status/503", ["--tries", "2"])
        #expect(unavailable.status == 1 && unavailable.stderr.contains("gave up after 2 attempts"), "\(unavailable.stderr)")
    }
}
