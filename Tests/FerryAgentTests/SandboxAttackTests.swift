import FerryBus
import FerryCore
import Foundation
import Testing

/// Attacks a sandboxed app (a fake Flatpak, `FakeFlatpak`) could make on the agent, each
/// refused (issue 31). Host callers get the same checks where the attack is not the sandbox's.
@Suite(.serialized) struct SandboxAttackTests {
    /// A CR LF pair in a header value would end the header and smuggle a second request onto
    /// the connection: refused by name, from an app and from the host, and nothing is sent.
    @Test(.needsBubblewrap)
    func aHeaderValueCannotSmuggleARequest() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("h.bin", size: 1_000)
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let smuggled = "v\\r\\nX-Injected: 1\\r\\n\\r\\nGET /smuggled HTTP/1.1\\r\\nHost: x"
        let r = try app.call("CreateDownload", session, h.faultURL("h.bin"), "{'headers': <{'X-A': '\(smuggled)'}>}")
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.InvalidArgument") && r.stderr.contains("X-A"), "\(r.stdout) \(r.stderr)")
        // (D-Bus strings hold no NUL: that case is HeaderFieldTests'.)
        for value in ["v\r\nX-Injected: 1", "v\nX", "v\rX"] {
            let c = try h.client()
            do {
                _ = try c.call("OpenSession", [.string("host"), .dict([:])])
                _ = try c.call("CreateDownload", [.string("host"), .string(h.faultURL("h.bin")),
                                                  .dict(["headers": .stringDict(["X-A": value])])])
                Issue.record("a header value with \(value.utf8.map { $0 }) was accepted")
            } catch let e as FerryError { #expect(e.kind == .invalidArgument && e.message.contains("X-A"), "\(e.message)") }
        }
        #expect(try h.serverLog().isEmpty, "no request reached the server")
    }

    /// Session ids are global: an app may open only its own ("APPID" or "APPID.…"), so it can
    /// neither take the user's CLI session before the user's first `ferry` nor a host app's or
    /// another app's predictable id.
    @Test(.needsBubblewrap)
    func anAppCannotSquatAnotherSession() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        for id in [BusNames.cliSession, "com.example.Reader.Background", SandboxTests.appID + "x.bg", "dev.ferry.test",
                   SandboxTests.appID + ".caf\u{E9}"] {
            let r = try app.call("OpenSession", id, "{}")
            #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.AccessDenied") && r.stderr.contains("begin with '\(SandboxTests.appID).'"),
                    "\(id): \(r.stdout) \(r.stderr)")
        }
        #expect(try app.call("OpenSession", SandboxTests.appID + ".bg", "{}").status == 0)
        #expect(try app.call("OpenSession", SandboxTests.appID, "{}").status == 0)
        // The user's first download goes to the user's session, owned by nobody else.
        let opened = try AgentProxy(h.client()).openSession(identifier: BusNames.cliSession, configuration: SessionOptions())
        #expect(opened.created && opened.inbox == StateFolder(h.state).inbox(BusNames.cliSession), "\(opened)")
        #expect(try AgentProxy(h.client()).getSession(session: BusNames.cliSession).configuration.app == "")
    }

    /// An app whose sandbox has no network gets none through the agent.
    @Test(.needsBubblewrap)
    func anAppWithoutTheNetworkFetchesNothing() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID, shared: ["ipc"])
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let r = try app.call("CreateDownload", session, "http://127.0.0.1:9/x", "{'paused': <true>}")
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.AccessDenied") && r.stderr.contains("network permission"),
                "\(r.stdout) \(r.stderr)")
        let networked = try FakeFlatpak(h, id: "dev.ferry.test.Other")
        #expect(try networked.call("OpenSession", "dev.ferry.test.Other.bg", "{'keep-events': <false>}").status == 0)
        #expect(try networked.call("CreateDownload", "dev.ferry.test.Other.bg", "http://127.0.0.1:9/x", "{'paused': <true>}").status == 0)
    }

    /// `home` reaches the user's folders, not the other apps' data, as in Flatpak itself.
    @Test(.needsBubblewrap)
    func aHomeGrantDoesNotReachOtherAppsData() throws {
        let h = try Harness()
        try h.startAgent()
        let other = try FakeFlatpak(h, id: "dev.ferry.test.Other")
        try "secret".write(toFile: other.home + "/cookies.sqlite", atomically: true, encoding: .utf8)
        let app = try FakeFlatpak(h, id: SandboxTests.appID, filesystems: ["home"])
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let upload = try app.call("CreateUpload", session, "http://127.0.0.1:9/up", other.home + "/cookies.sqlite", "{'paused': <true>}")
        #expect(upload.status != 0 && upload.stderr.contains("dev.ferry.Error.AccessDenied"), "\(upload.stdout) \(upload.stderr)")
        let into = try app.call("CreateDownload", session, "http://127.0.0.1:9/x", "{'directory': <'\(other.home)'>, 'paused': <true>}")
        #expect(into.status != 0 && into.stderr.contains("dev.ferry.Error.AccessDenied"), "\(into.stdout) \(into.stderr)")
        let flatpakData = h.root + "/home/.local/share/flatpak"
        try FileManager.default.createDirectory(atPath: flatpakData, withIntermediateDirectories: true)
        let overrides = try app.call("CreateDownload", session, "http://127.0.0.1:9/x", "{'directory': <'\(flatpakData)'>, 'paused': <true>}")
        #expect(overrides.status != 0 && overrides.stderr.contains("dev.ferry.Error.AccessDenied"), "\(overrides.stderr)")
        // Its own folder and the rest of home stay its to use.
        let docs = h.root + "/home/Documents"
        try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
        #expect(try app.call("CreateDownload", session, "http://127.0.0.1:9/x", "{'directory': <'\(docs)'>, 'paused': <true>}").status == 0)
        #expect(try app.call("CreateDownload", session, "http://127.0.0.1:9/x", "{'directory': <'\(app.home)'>, 'paused': <true>}").status == 0)
    }

    /// Resume data names a task; an app's blob naming the host's (stolen or forged) adopts none
    /// of its kept bytes and none of its destination.
    @Test(.needsBubblewrap)
    func resumeDataOfAnotherOwnersTaskIsRefused() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("kept.bin", size: 200_000)
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("host"), .dict([:])])
        let hostTask = try #require(try c.call("CreateDownload", [.string("host"), .string(h.faultURL("kept.bin", "hold=80000")), .dict([:])]).first?.int64Value)
        try h.eventually("the hold") { (try h.show(hostTask)["received"] as? Int) == 80_000 }
        let blob = try #require(try c.call("CancelProducingResumeData", [.uint64(UInt64(hostTask))]).first?.bytesValue)
        let staged = StateFolder(h.state).staged(hostTask)
        #expect(FileManager.default.fileExists(atPath: staged))
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let bytes = "@ay [" + blob.map { String($0) }.joined(separator: ", ") + "]"
        let r = try app.call("CreateDownloadFromResumeData", session, bytes, "{'paused': <true>}")
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.InvalidResumeData"), "\(r.stdout) \(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: staged), "the host's kept bytes stay the host's")
        // The host itself may continue from them.
        #expect(try c.call("CreateDownloadFromResumeData", [.string("host"), .bytes(blob), .dict(["paused": .bool(true)])]).first?.int64Value != nil)
    }

    /// Resume data is signed by the agent (HMAC, key in the state folder): an app cannot alter
    /// the blob it was given nor make one up; the host's old unsigned blobs still work for it.
    @Test(.needsBubblewrap)
    func resumeDataIsAuthenticated() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("kept.bin", size: 200_000)
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let made = try app.call("CreateDownload", session, h.faultURL("kept.bin", "hold=80000"), "{}")
        let task = try #require(SandboxTests.taskID(made.stdout), "\(made.stdout) \(made.stderr)")
        try h.eventually("the hold") { (try h.show(task)["received"] as? Int) == 80_000 }
        let c = try h.client()
        let blob = try #require(try c.call("CancelProducingResumeData", [.uint64(UInt64(task))]).first?.bytesValue)
        func edited(_ change: (inout [String: Any]) -> Void) throws -> [UInt8] {
            var json = try #require(try JSONSerialization.jsonObject(with: Data(blob)) as? [String: Any])
            change(&json)
            return Array(try JSONSerialization.data(withJSONObject: json))
        }
        func fromApp(_ bytes: [UInt8]) throws -> Harness.Result {
            try app.call("CreateDownloadFromResumeData", session, "@ay [" + bytes.map { String($0) }.joined(separator: ", ") + "]", "{'paused': <true>}")
        }
        let altered = try edited { $0["etag"] = "\"forged\"" }
        let unsigned = try edited { $0["signature"] = nil }
        var r = try fromApp(altered)
        #expect(r.status != 0 && r.stderr.contains("InvalidResumeData") && r.stderr.contains("signature"), "\(r.stderr)")
        r = try fromApp(unsigned)
        #expect(r.status != 0 && r.stderr.contains("InvalidResumeData") && r.stderr.contains("not signed"), "\(r.stderr)")
        #expect(try fromApp(blob).status == 0, "the blob the agent gave out is the app's to continue from")
        #expect(throws: FerryError.self) {
            try c.call("CreateDownloadFromResumeData", [.string("host"), .bytes(altered), .dict(["paused": .bool(true)])])
        }
        _ = try c.call("OpenSession", [.string("host"), .dict([:])])
        #expect(try c.call("CreateDownloadFromResumeData", [.string("host"), .bytes(unsigned), .dict(["paused": .bool(true)])]).first?.int64Value != nil)
        let key = try FileManager.default.attributesOfItem(atPath: StateFolder(h.state).resumeKey)
        #expect((key[.posixPermissions] as? Int) == 0o600)
    }

    /// An app's batches, tasks and sessions are bounded (the core's rules are AppLimitsTests'):
    /// beyond them LimitExceeded names the limit; the host's own calls are not limited.
    @Test(.needsBubblewrap)
    func anAppCannotGrowTheAgentWithoutBound() throws {
        let h = try Harness()
        try h.startAgent(["--app-max-batch", "2", "--app-max-sessions", "1"])
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let batch = (1...3).map { "('http://127.0.0.1:9/\($0)', {'paused': <true>})" }.joined(separator: ", ")
        var r = try app.call("CreateDownloads", session, "[\(batch)]")
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.LimitExceeded") && r.stderr.contains("--app-max-batch"), "\(r.stderr)")
        r = try app.call("OpenSession", session + "2", "{}")
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error.LimitExceeded") && r.stderr.contains("--app-max-sessions"), "\(r.stderr)")
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("host"), .dict([:])])
        let requests: [Value] = (1...3).map { .tuple([.string("http://127.0.0.1:9/\($0)"), .dict(["paused": .bool(true)])]) }
        #expect(try c.call("CreateDownloads", [.string("host"), .array(requests, elementType: "(sa{sv})")]).first != nil)
    }
}
