import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The desktop's proxy, through a real proxy server (pproxy, from PyPI) on loopback that sends
/// every connection to nginx whatever host was asked for: a URL on a host nobody resolves
/// (`only-through-proxy.invalid`) downloads only through the proxy.
@Suite(.serialized) struct ProxyTests {
    static let hiddenHost = "only-through-proxy.invalid"

    /// Starts pproxy on a free port (`listen`: its scheme and credentials, e.g. "http" or
    /// "socks5"), forwarding to nginx; returns the port and the file of its connection log.
    static func startProxy(_ h: Harness, listen: String = "http", auth: String? = nil) throws -> (port: Int, log: String) {
        let port = try Harness.freePort()
        let log = h.root + "/proxy-\(port).log"
        try h.spawn("/usr/bin/env", ["python3", "-u", "-m", "pproxy", "-v",
                                     "-l", "\(listen)://127.0.0.1:\(port)" + (auth.map { "#" + $0 } ?? ""),
                                     "-r", "tunnel://127.0.0.1:\(h.nginxPort)"], output: log)
        try h.eventually("the proxy listening (pip install pproxy: scripts/install-deps --test)") { Harness.canConnect(port) }
        return (port, log)
    }

    /// GNOME's proxy settings, as GSettings' keyfile backend keeps them for a test.
    /// `https`: the same proxy for https URLs too, and nothing goes direct; `credentials`: the
    /// http proxy's (GNOME keeps no others).
    static func gnomeProxy(_ h: Harness, host: String, port: Int, socks: Bool = false, https: Bool = false,
                           credentials: (user: String, password: String)? = nil) throws -> [String: String] {
        let folder = h.root + "/home/.config/glib-2.0/settings"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let section = socks ? "socks" : "http"
        let login = credentials.map {
            "use-authentication=true\nauthentication-user='\($0.user)'\nauthentication-password='\($0.password)'\n"
        } ?? ""
        try """
            [system/proxy]
            mode='manual'
            ignore-hosts=\(https ? "@as []" : "['localhost', '127.0.0.0/8', '::1']")

            [system/proxy/\(section)]
            host='\(host)'
            port=\(port)
            \(login)
            \(https ? "[system/proxy/https]\nhost='\(host)'\nport=\(port)\n" : "")
            """.write(toFile: folder + "/keyfile", atomically: true, encoding: .utf8)
        return ["GSETTINGS_BACKEND": "keyfile", "XDG_CURRENT_DESKTOP": "GNOME"]
    }

    /// The hosts the proxy was asked for (its log: "http CLIENT -> tunnel NGINX -> ASKED").
    static func asked(_ log: String) throws -> [String] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .compactMap { $0.components(separatedBy: " -> ").dropFirst(2).first }
    }

    /// Downloads `url` and waits (bounded: without its proxy a task would retry for days) until
    /// it completed; the file's path.
    static func download(_ h: Harness, _ url: String) throws -> String {
        let id = try h.ferry("download", url).taskID()
        try h.eventually("task \(id) completed", timeout: 20) {
            let info = try h.show(id)
            if info["state"] as? String == "waiting" || info["state"] as? String == "failed" {
                Issue.record("task \(id) \(info["state"] ?? ""): \(info["error"] ?? "")")
                return true
            }
            return info["state"] as? String == "completed"
        }
        return try #require(try h.show(id)["file"] as? String)
    }

    @Test func gnomeProxySettingsAreFollowedAndItsExceptionsGoDirect() throws {
        let h = try Harness()
        try h.startNginx()
        let data = try h.makeFile("via-proxy.bin", size: 200_000)
        _ = try h.makeFile("direct.bin", size: 1_000)
        let proxy = try Self.startProxy(h)
        try h.startAgent(environment: try Self.gnomeProxy(h, host: "127.0.0.1", port: proxy.port))
        let file = try Self.download(h, "http://\(Self.hiddenHost)/via-proxy.bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        // 127.0.0.1 is in ignore-hosts: straight to nginx, the proxy never sees it.
        _ = try Self.download(h, "http://127.0.0.1:\(h.nginxPort)/direct.bin")
        #expect(try Self.asked(proxy.log) == ["\(Self.hiddenHost):80"])
    }

    /// GNOME keeps proxy credentials under its http proxy only, and its resolver hands an
    /// https URL the https proxy bare: the same proxy gets the http proxy's credentials, as
    /// GNOME's own apps do (before, every HTTPS download waited with reason proxy).
    @Test func gnomesProxyCredentialsServeHTTPSThroughTheSameProxy() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true)
        let data = try h.makeFile("tls.bin", size: 100_000)
        let proxy = try Self.startProxy(h, auth: "ferry:s3cret!")
        let settings = try Self.gnomeProxy(h, host: "127.0.0.1", port: proxy.port, https: true, credentials: ("ferry", "s3cret!"))
        try h.startAgent(["--ca-file", cert], environment: settings)
        let file = try Self.download(h, "https://127.0.0.1:\(h.nginxPort)/tls.bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        #expect(try Self.asked(proxy.log) == ["127.0.0.1:\(h.nginxPort)"])
        #expect(!(try String(contentsOfFile: h.root + "/agent.log", encoding: .utf8)).contains("s3cret"))
    }

    @Test func socksFromGnomeSettingsResolvesThroughTheProxy() throws {
        let h = try Harness()
        try h.startNginx()
        let data = try h.makeFile("s.bin", size: 50_000)
        let proxy = try Self.startProxy(h, listen: "socks5")
        try h.startAgent(environment: try Self.gnomeProxy(h, host: "127.0.0.1", port: proxy.port, socks: true))
        let file = try Self.download(h, "http://\(Self.hiddenHost)/s.bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
    }

    @Test func theEnvironmentsProxyWithCredentialsAndNoProxy() throws {
        let h = try Harness()
        try h.startNginx()
        let data = try h.makeFile("e.bin", size: 20_000)
        _ = try h.makeFile("n.bin", size: 1_000)
        let proxy = try Self.startProxy(h, auth: "ferry:s3cret")
        try h.startAgent(environment: ["http_proxy": "http://ferry:s3cret@127.0.0.1:\(proxy.port)",
                                       "no_proxy": "127.0.0.1", "XDG_CURRENT_DESKTOP": "", "GSETTINGS_BACKEND": "memory"])
        let file = try Self.download(h, "http://\(Self.hiddenHost)/e.bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        _ = try Self.download(h, "http://127.0.0.1:\(h.nginxPort)/n.bin")
        #expect(try Self.asked(proxy.log) == ["\(Self.hiddenHost):80"])
        // The password never reaches the agent's log.
        #expect(!(try String(contentsOfFile: h.root + "/agent.log", encoding: .utf8)).contains("s3cret"))
    }

    @Test func aProxyThatCannotBeReachedMakesTheTaskWaitNamingIt() throws {
        let h = try Harness()
        try h.startNginx()
        _ = try h.makeFile("w.bin", size: 1_000)
        let closed = try Harness.freePort()   // nothing listens there
        try h.startAgent(["--retry-base-ms", "60000", "--retry-cap-ms", "60000"], environment: try Self.gnomeProxy(h, host: "127.0.0.1", port: closed))
        let id = try h.ferry("download", "http://\(Self.hiddenHost)/w.bin").taskID()
        try h.eventually("the task waits for its proxy") { (try h.show(id))["reason"] as? String == "proxy" }
        let info = try h.show(id)
        #expect(info["state"] as? String == "waiting")
        #expect((info["error"] as? String ?? "").contains("http://127.0.0.1:\(closed)"), "\(info)")
        let shown = try h.ferry("show", String(id))
        #expect(shown.stdout.contains("waiting (proxy)"), "\(shown.stdout)")
    }

    /// A proxy that wants credentials the desktop does not have (407): the user's download waits
    /// for them (reason credentials, naming the proxy and `ferry login`), not for days of
    /// retries; `ferry login` answers and it completes. An app's session hears a challenge marked
    /// as the proxy's, and its answer goes to the proxy, never to the server.
    @Test func aProxyAskingForCredentialsIsAChallenge() throws {
        let h = try Harness()
        try h.startNginx()
        let data = try h.makeFile("p.bin", size: 30_000)
        try h.makeFile("q.bin", size: 1_000)
        let proxy = try Self.startProxy(h, auth: "ferry:s3cret")
        try h.startAgent(environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)", "XDG_CURRENT_DESKTOP": "", "GSETTINGS_BACKEND": "memory"])
        let id = try h.ferry("download", "http://\(Self.hiddenHost)/p.bin").taskID()
        try h.eventually("waiting for credentials") { try h.show(id)["reason"] as? String == "credentials" }
        let error = try h.show(id)["error"] as? String ?? ""
        #expect(error.contains("http://127.0.0.1:\(proxy.port)") && error.contains("ferry login \(id)"), "\(error)")
        let login = try h.run("/bin/sh", ["-c", "printf 's3cret\\n' | \"$0\" login \(id) --user ferry", Harness.ferry])
        #expect(login.status == 0, "\(login.stderr)")
        try h.eventually("completed") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(try h.show(id)["file"] as? String))) == data)

        // Another proxy (pproxy trusts a client it authenticated for a while), a new agent.
        let second = try Self.startProxy(h, auth: "ferry:s3cret")
        h.killAgent()
        try h.startAgent(environment: ["http_proxy": "http://127.0.0.1:\(second.port)", "XDG_CURRENT_DESKTOP": "", "GSETTINGS_BACKEND": "memory"])
        var c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Proxy"), .dict([:])])
        let app = try #require(try c.call("CreateDownload", [.string("dev.ferry.test.Proxy"), .string("http://\(Self.hiddenHost)/q.bin"),
                                                              .dict(["directory": .string(h.downloads)])]).first?.int64Value)
        var challenge: SessionEvent?
        try h.eventually("the app's challenge") {
            let events = try (try c.call("FetchEvents", [.string("dev.ferry.test.Proxy"), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
                .compactMap { try FetchedEvent(bus: $0)?.queued.event }
            challenge = events.first { if case .challenge = $0 { return true } else { return false } }
            return challenge != nil
        }
        #expect(challenge == .challenge(scheme: "Basic", realm: "simple", host: "127.0.0.1", previousFailures: 0, proxy: true),
                "\(String(describing: challenge))")
        _ = try c.call("AnswerChallenge", [.uint64(UInt64(app)), .dict(["user": .string("ferry"), "password": .string("s3cret")])])
        try h.eventually("the app's download completed") { try h.show(app)["state"] as? String == "completed" }
        #expect(!(try String(contentsOfFile: h.root + "/agent.log", encoding: .utf8)).contains("s3cret"))
    }
}
