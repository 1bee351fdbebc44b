import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Issue 54's attacks (round 4), each as it ran: a fake Flatpak app or a host program against
/// the real agent and loopback servers, with a control step that shows the attempt reached it.
@Suite(.serialized) struct SandboxRoundFourTests {
    static let parent = "dev.ferry.test.Nest"
    static let child = "dev.ferry.test.Nest.Child"

    /// The file an app's finished download was saved to (the host reads it).
    static func savedText(_ h: Harness, _ id: Int64) throws -> String {
        try h.eventually("task \(id) completed") { try h.show(id)["state"] as? String == "completed" }
        return try String(contentsOfFile: try #require(try h.show(id)["file"] as? String), encoding: .utf8)
    }

    /// Item 4: session `…Child.sync/jobs` of the parent app and `…Child.sync_jobs` of the child
    /// keep separate cookie jars: the parent's request carries none of the child's cookies,
    /// and the parent invalidating its session leaves the child's jar.
    @Test(.needsBubblewrap)
    func nestedAppsSessionsDoNotShareACookieJar() throws {
        let h = try Harness()
        let (port, _) = try RealServerTests.startHTTPBin(h)
        try h.startAgent()
        let base = "http://127.0.0.1:\(port)"
        let child = try FakeFlatpak(h, id: Self.child), parent = try FakeFlatpak(h, id: Self.parent)
        let childSession = Self.child + ".sync_jobs", parentSession = Self.child + ".sync/jobs"
        let options = "{'cookies': <true>, 'keep-events': <false>}"
        #expect(try child.call("OpenSession", childSession, options).status == 0)
        #expect(try parent.call("OpenSession", parentSession, options).status == 0)
        func fetch(_ app: FakeFlatpak, _ session: String, _ path: String) throws -> String {
            let created = try app.call("CreateDownload", session, base + path, "{}")
            return try Self.savedText(h, try #require(SandboxTests.taskID(created.stdout), "\(created.stderr)"))
        }
        #expect(try fetch(child, childSession, "/cookies/set?secret=childs").contains("childs"))
        #expect(!(try fetch(parent, parentSession, "/cookies").contains("childs")), "the parent got the child's cookie")
        #expect(try fetch(child, childSession, "/cookies").contains("childs"))  // the control: the jar works
        #expect(try parent.call("InvalidateSession", parentSession, "false").status == 0)
        try h.eventually("the parent's session invalidated") {
            try parent.call("CreateDownload", parentSession, base + "/cookies", "{}").stderr.contains("invalidated")
        }
        #expect(try fetch(child, childSession, "/cookies").contains("childs"), "the parent deleted the child's jar")
    }

    /// Item 5: header fields are capped (value, total, count), refused by name; fields within
    /// the caps are taken (the control).
    @Test(.needsBubblewrap)
    func headerFieldsAreCapped() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".h"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        func create(_ headers: [String: String]) throws -> Harness.Result {
            let dict = headers.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ")
            return try app.call("CreateDownload", session, "http://127.0.0.1:9/f", "{'paused': <true>, 'headers': <{\(dict)}>}")
        }
        let big = String(repeating: "a", count: 9_000)
        let refusedBig = try create(["X-Api-Key": big])
        #expect(refusedBig.status != 0 && refusedBig.stderr.contains("header 'X-Api-Key' longer than 8192 bytes"), "\(refusedBig.stderr)")
        let many = Dictionary(uniqueKeysWithValues: (0..<101).map { ("X-F\($0)", "v") })
        let refusedMany = try create(many)
        #expect(refusedMany.status != 0 && refusedMany.stderr.contains("101 header fields: at most 100"), "\(refusedMany.stderr)")
        let wide = Dictionary(uniqueKeysWithValues: (0..<9).map { ("X-W\($0)", String(repeating: "b", count: 8_000)) })
        let refusedWide = try create(wide)
        #expect(refusedWide.status != 0 && refusedWide.stderr.contains("at most 65536 a task"), "\(refusedWide.stderr)")
        let fine = try create(["X-Api-Key": String(repeating: "k", count: 8_000)])
        #expect(fine.status == 0 && SandboxTests.taskID(fine.stdout) != nil, "\(fine.stderr)")
    }

    /// Item 11: after a host program invalidates the CLI's session (while it holds a paused
    /// task, so the invalidation waits for it), `ferry download` opens it again and works.
    @Test func theCLIReopensItsSessionAfterAnInvalidation() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.makeFile("a.bin", size: 1_000)
        try h.startAgent()
        let held = try h.run(Harness.ferry, ["download", h.faultURL("a.bin"), "--start-at", "2099-01-01T00:00:00Z"])
        #expect(held.status == 0, "\(held.stderr)")
        _ = try h.client().call("InvalidateSession", [.string(BusNames.cliSession), .bool(false)])
        // The control: the invalidation took (a client that does not open the session again is refused).
        #expect(throws: (any Error).self) {
            try h.client().call("CreateDownload", [.string(BusNames.cliSession), .string(h.faultURL("a.bin")), .dict([:])])
        }
        let after = try h.run(Harness.ferry, ["download", "--wait", h.faultURL("a.bin")])
        #expect(after.status == 0, "\(after.stderr)")
        let done = try h.run(Harness.ferry, ["download", "--wait", h.faultURL("a.bin")])
        #expect(done.status == 0, "\(done.stderr)")
    }

    /// Item 1: a tus server names the upload resource on another origin (127.0.0.2): the file
    /// goes there without the app's own credential fields (`X-Api-Key`, `Private-Token`), which
    /// go to the task's origin only (the control).
    @Test func anUploadResourceOnAnotherOriginGetsNoFieldTheAppSet() throws {
        let h = try Harness()
        try h.startFaultServer(also: OriginTests.other)
        try h.startAgent()
        try h.makeFile("doc.bin", size: 200_000)
        let rec = Recorder()
        let session = try OriginTests.session(h, rec, "OriginFields")
        let id = try OriginTests.upload(session, rec, h.faultURL("tus/", "otherhost=\(OriginTests.other)"), h.www + "/doc.bin",
                                        headers: ["X-Api-Key": "app-secret", "Private-Token": "glpat-secret"])
        #expect(rec.calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        let creation = try h.serverLog().filter { $0.method == "POST" }
        #expect(creation.count == 1 && creation.first?.apikey == "app-secret")  // the task's origin has it
        let elsewhere = try OriginTests.toOther(h)
        #expect(elsewhere.contains { $0.method == "PATCH" }, "the agent never reached the other origin: \(elsewhere)")
        #expect(elsewhere.allSatisfy { $0.apikey == nil }, "\(elsewhere.map(\.apikey))")
        session.disconnect()
    }

    /// nginx with TLS in front of the fault server (its tus and upload paths), and a path
    /// that redirects an upload to plain http.
    static func tlsFront(_ h: Harness) throws -> String {
        try h.startFaultServer(also: OriginTests.other)
        return try h.startNginx(tls: true, locations: """
            location /tus/ { proxy_pass http://127.0.0.1:\(h.faultPort); proxy_set_header Host 127.0.0.1:\(h.faultPort); }
            location /moved/ { return 307 http://127.0.0.1:\(h.faultPort)/upload/doc.bin; }
            """)
    }

    /// Item 2: an https tus server names its upload resource on plain http: the task fails
    /// naming it and no byte of the file goes there; the creation reached the server (the control).
    @Test func anHTTPSUploadIsNotSentToAPlainHTTPResource() throws {
        let h = try Harness()
        let cert = try Self.tlsFront(h)
        try h.startAgent(["--ca-file", cert])
        try h.makeFile("doc.bin", size: 100_000)
        let url = "https://127.0.0.1:\(h.nginxPort)/tus/?otherhost=\(OriginTests.other)"
        let r = try h.run(Harness.ferry, ["upload", "--wait", "--method", "POST", "--resumable", "tus", h.www + "/doc.bin", url])
        #expect(r.status == 1 && r.stderr.contains("plain http") && r.stderr.contains("unencrypted"), "\(r.stderr)")
        let log = try h.serverLog()
        #expect(log.contains { $0.method == "POST" }, "the creation never reached the server: \(log)")
        #expect(!log.contains { $0.method == "PATCH" || $0.method == "HEAD" }, "\(log)")
    }

    /// Item 2: an https upload redirected (307) to plain http fails naming it; nothing reaches
    /// the plain server.
    @Test func anHTTPSUploadIsNotRedirectedToPlainHTTP() throws {
        let h = try Harness()
        let cert = try Self.tlsFront(h)
        try h.startAgent(["--ca-file", cert])
        try h.makeFile("doc.bin", size: 100_000)
        let url = "https://127.0.0.1:\(h.nginxPort)/moved/doc.bin"
        let r = try h.run(Harness.ferry, ["upload", "--wait", "--resumable", "none", h.www + "/doc.bin", url])
        #expect(r.status == 1 && r.stderr.contains("redirected this https upload") && r.stderr.contains("unencrypted"),
                "\(r.stderr)")
        #expect(try h.serverLog().isEmpty)
        let access = try String(contentsOfFile: h.root + "/nginx/logs/access.log", encoding: .utf8)
        #expect(access.contains("/moved/doc.bin") && access.contains(" 307 "), "\(access)")  // the control
    }

    /// Item 3: through a CONNECT proxy that wants no password, an https server's own 407 is the
    /// server's: the user's task fails ("server answered HTTP 407"), it does not wait for
    /// `ferry login`; the tunnel went through the proxy (the control).
    @Test func aServersOwn407InsideTheTunnelIsNotTheProxys() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true, locations: """
            location /corporate/ {
                add_header Proxy-Authenticate 'Basic realm="Corporate proxy: enter your domain password"' always;
                return 407;
            }
            """)
        let proxy = try ProxyTests.startProxy(h)
        let settings = try ProxyTests.gnomeProxy(h, host: "127.0.0.1", port: proxy.port, https: true)
        try h.startAgent(["--ca-file", cert], environment: settings)
        let id = try h.ferry("download", "https://127.0.0.1:\(h.nginxPort)/corporate/x.bin").taskID()
        try h.eventually("the task ended or waits") {
            let state = try h.show(id)["state"] as? String
            return state == "failed" || state == "waiting"
        }
        let info = try h.show(id)
        #expect(info["state"] as? String == "failed" && info["reason"] is NSNull, "\(info)")
        #expect((info["error"] as? String)?.contains("server answered HTTP 407") == true, "\(info)")
        #expect(try ProxyTests.asked(proxy.log) == ["127.0.0.1:\(h.nginxPort)"])
    }

    /// Item 6: an app's queue on a server that accepts and never answers takes at most all
    /// slots but one (the control: it holds that many); the user's download starts at once and
    /// completes while the app's still hang.
    @Test(.needsBubblewrap)
    func anAppCannotHoldEveryTransferSlot() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.makeFile("big.bin", size: 100_000)
        try h.makeFile("users.bin", size: 20_000)
        try h.startAgent(["--max-transfers", "3", "--max-per-host", "10", "--stall-timeout", "600"])  // held, never stalled
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".hog"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        var apps: [Int64] = []
        for i in 0..<5 {
            let created = try app.call("CreateDownload", session, h.faultURL("big.bin", "hold=1000&n=\(i)"), "{}")
            apps.append(try #require(SandboxTests.taskID(created.stdout), "\(created.stderr)"))
        }
        func held() throws -> Int { try apps.filter { try h.show($0)["received"] as? Int == 1_000 }.count }
        try h.eventually("the app's share held") { try held() == 2 }
        let users = try h.ferry("download", h.faultURL("users.bin")).taskID()
        try h.eventually("the user's download completed", timeout: 20) { try h.show(users)["state"] as? String == "completed" }
        #expect(try held() == 2 && apps.filter { try h.show($0)["state"] as? String == "queued" }.count == 3)
        // Each held answer waits for a release of its own: released until all are done.
        try h.eventually("the app's tasks done") {
            try h.releaseHolds()
            return try apps.allSatisfy { try h.show($0)["state"] as? String == "completed" }
        }
    }

    /// Item 10: a gzip answer of about 100 kB that inflates to 100 MB is refused by the agent's
    /// own bound, naming it, with little written; a text that compresses as text does (the
    /// control) is saved decoded.
    @Test func aDecompressionBombIsRefusedByName() throws {
        let h = try Harness()
        // The same bytes slowly (small reads): the agent's ratio bound, not libcurl's buffer, stops it.
        try h.startNginx(locations: "location /slow-labelled/ { alias \(h.www)/labelled/; limit_rate 16k; add_header Content-Encoding gzip; }")
        let folder = h.www + "/labelled"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try h.run("/usr/bin/python3", ["-c", """
            import gzip, sys
            with gzip.open(sys.argv[1] + '/bomb.txt', 'wb', 9) as f:
                for _ in range(100): f.write(bytes(1 << 20))
            with gzip.open(sys.argv[1] + '/words.txt', 'wb', 9) as f:
                f.write(b''.join(b'line %d of an ordinary log file\\n' % i for i in range(400000)))
            """, folder])
        #expect(made.status == 0, "\(made.stderr)")
        try h.startAgent()
        let bomb = try h.run(Harness.ferry, ["download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(h.nginxPort)/labelled/bomb.txt"])
        #expect(bomb.status == 1 && bomb.stderr.contains("decompression bomb"), "\(bomb.stderr)")
        let slow = try h.run(Harness.ferry, ["download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(h.nginxPort)/slow-labelled/bomb.txt"])
        #expect(slow.status == 1 && slow.stderr.contains("more than 100 times its size"), "\(slow.stderr)")
        let words = try h.run(Harness.ferry, ["download", "--wait", "--dir", h.root + "/got", "http://127.0.0.1:\(h.nginxPort)/labelled/words.txt"])
        #expect(words.status == 0, "\(words.stderr)")
        let saved = try String(contentsOfFile: h.root + "/got/words.txt", encoding: .utf8)
        #expect(saved.hasPrefix("line 0 of an ordinary log file\n") && saved.utf8.count > 12_000_000)
    }

    /// Item 9: an app's look-alike host (a Cyrillic а among Latin letters) reads in its `xn--`
    /// form in `ferry list` and `ferry show`, and hidden characters in its URL (RLO, a C1
    /// control, a zero-width space) stay escaped; a host in one script reads in its letters
    /// and ordinary letters decoded (the control).
    @Test(.needsBubblewrap)
    func lookAlikeAndHiddenCharactersReachNoDisplay() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".names"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        func create(_ url: String) throws -> Int64 {
            let created = try app.call("CreateDownload", session, url, "{'paused': <true>}")
            return try #require(SandboxTests.taskID(created.stdout), "\(created.stderr)")
        }
        let fake = try create("http://\u{430}pple.com/")
        let whole = try create("http://\u{430}\u{440}\u{440}\u{4CF}\u{435}.com/")
        let hidden = try create("http://example.org/invoice%E2%80%AEfdp.exe?x=%C2%9B&y=a%E2%80%8Bb&z=caf%C3%A9")
        let fine = try create("http://b\u{FC}cher.example/")
        let shown = try h.ferry("show", "\(fake)").stdout
        #expect(shown.contains("http://xn--pple-43d.com/") && !shown.contains("\u{430}pple"), "\(shown)")
        #expect(try h.ferry("show", "\(whole)").stdout.contains("http://xn--"), "a whole-script look-alike read as Latin")
        let odd = try h.ferry("show", "\(hidden)").stdout
        #expect(odd.contains("invoice%E2%80%AEfdp.exe") && odd.contains("x=%C2%9B") && odd.contains("y=a%E2%80%8Bb"), "\(odd)")
        #expect(odd.contains("z=café"), "\(odd)")  // the control: letters are decoded
        #expect(try h.ferry("show", "\(fine)").stdout.contains("http://bücher.example/"))  // the control
        let list = try h.ferry("list").stdout
        #expect(list.contains("xn--pple-43d.com") && !list.contains("\u{430}pple") && !list.contains("\u{202E}"), "\(list)")
    }

    /// Item 7: on a 24 MB state disk an app's three 6 MB downloads take its share (about half
    /// of what staging may use: one of them, held half way, the control), the other two wait for
    /// space naming the app's share, and the user's 9 MB download goes through at once.
    @Test(.needsBubblewrap, .enabled(if: SmallDisk.available, SmallDisk.skipReason))
    func anAppCannotHoldTheStateDisk() throws {
        let h = try Harness()
        try h.startFaultServer()
        _ = try h.mountSmallDisk(h.state, kilobytes: 24 * 1024)
        try h.startAgent(["--state-reserve-mb", "2", "--state-reserve-percent", "1", "--stall-timeout", "600", "--max-per-host", "10"])
        try h.makeFile("app.bin", size: 6_000_000)
        let users = try h.makeFile("users.bin", size: 9_000_000)
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".disk"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        var apps: [Int64] = []
        for i in 0..<3 {
            let created = try app.call("CreateDownload", session, h.faultURL("app.bin", "hold=3000000&n=\(i)"), "{}")
            apps.append(try #require(SandboxTests.taskID(created.stdout), "\(created.stderr)"))
        }
        try h.eventually("the app's downloads held half way or waiting") {
            try apps.allSatisfy { let i = try h.show($0); return i["received"] as? Int == 3_000_000 || i["state"] as? String == "waiting" }
        }
        let mine = try h.ferry("download", "--output", h.root + "/users.bin", h.faultURL("users.bin")).taskID()
        try h.eventually("the user's download completed", timeout: 20) { try h.show(mine)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/users.bin")) == users)
        #expect(try apps.map { try h.show($0)["state"] as? String ?? "?" }.sorted() == ["running", "waiting", "waiting"])
        let waiting = try apps.first { try h.show($0)["state"] as? String == "waiting" }.map { try h.show($0) }
        #expect(waiting?["reason"] as? String == "space" && (waiting?["error"] as? String)?.contains("share") == true, "\(String(describing: waiting))")
    }
}
