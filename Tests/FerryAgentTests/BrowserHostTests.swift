import FerryBus
import FerryCore
import Foundation
import Testing

/// The native messaging host as the browser drives it (issue 59): the real executable, framed
/// messages on its stdin (a 4-byte length in the machine's order, then UTF-8 JSON), replies
/// read from its stdout in the same frames.
@Suite struct BrowserHostTests {
    static func frame(_ json: String) -> Data {
        let body = Data(json.utf8)
        return withUnsafeBytes(of: UInt32(body.count)) { Data($0) } + body
    }

    /// Feeds `input`, closes stdin as a browser does when it is done, and reads every reply.
    static func exchange(_ h: Harness, _ input: Data) throws -> (replies: [[String: Any]], status: Int32) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Harness.browserHost)
        p.arguments = ["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]
        p.environment = h.environment
        let stdin = Pipe(), stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        try p.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()  // the host's end closes it
        try h.waitForExit(p, "the host")
        var replies: [[String: Any]] = [], at = 0
        while at + 4 <= out.count {
            let length = out[at..<at + 4].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
            let body = out[(at + 4)..<min(out.count, at + 4 + length)]
            replies.append(try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]))
            at += 4 + length
        }
        #expect(at == out.count, "whole frames only")
        return (replies, p.terminationStatus)
    }

    /// ping, then a download that needs the site's session cookie: the file is saved under the
    /// browser's name, the cookie was sent, and the task is in the browser's session.
    @Test func aDownloadWithTheSitesCookieIsQueued() throws {
        let h = try Harness()
        let data = try h.makeFile("statement.pdf", size: 50_000)
        try h.startFaultServer()
        try h.startAgent()
        let download = """
            {"type":"download","url":"\(h.faultURL("statement.pdf"))","referrer":"http://127.0.0.1/account",\
            "cookies":"sid=s3cret; theme=dark","userAgent":"Mozilla/5.0 Test","filename":"/home/u/Downloads/March.pdf"}
            """
        let (replies, status) = try Self.exchange(h, Self.frame(#"{"type":"ping"}"#) + Self.frame(download))
        #expect(status == 0 && replies.count == 2, "\(replies)")
        #expect(replies.first?["ok"] as? Bool == true && replies.first?["version"] as? String == FerryRelease.version)
        let id = try #require(replies.last?["task"] as? Int, "\(replies)")
        try h.eventually("the file") { try h.show(Int64(id))["state"] as? String == "completed" }
        let shown = try h.show(Int64(id))
        #expect(shown["session"] as? String == "dev.ferry.browser" && shown["description"] as? String == "From the browser")
        #expect(FileManager.default.contents(atPath: h.downloads + "/March.pdf") == data, "the browser's name")
        #expect(try h.serverLog().last?.cookie == "sid=s3cret; theme=dark")
    }

    /// Bad messages are each answered by name, and the host goes on answering.
    @Test func badMessagesAreAnsweredByNameAndTheHostGoesOn() throws {
        let h = try Harness()
        try h.startAgent()
        let bad: [(String, String)] = [
            ("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object"), (#"{"kind":"ping"}"#, "no \"type\""),
            (#"{"type":"upload"}"#, "unknown type"), (#"{"type":"download"}"#, "needs \"url\""),
            (#"{"type":"download","url":"file:///etc/passwd"}"#, "only http and https"),
            (#"{"type":"download","url":"https://example.org/f","cookies":"a=b\r\nX-Evil: 1"}"#, "Cookie holds a line break"),
            (#"{"type":"download","url":"https://exa mple.org/f"}"#, "URL contains spaces"),
        ]
        let input = bad.map { Self.frame($0.0) }.reduce(Data(), +) + Self.frame(#"{"type":"ping"}"#)
        let (replies, status) = try Self.exchange(h, input)
        #expect(status == 0 && replies.count == bad.count + 1, "\(replies)")
        for (reply, (_, why)) in zip(replies, bad) {
            #expect(reply["ok"] as? Bool == false && (reply["error"] as? String)?.contains(why) == true, "\(reply) \(why)")
        }
        #expect(replies.last?["ok"] as? Bool == true, "still well after them")
        let listed = try JSONSerialization.jsonObject(with: Data(try h.ferry("list", "--json").stdout.utf8)) as? [Any]
        #expect(listed?.isEmpty == true, "nothing was queued")
    }

    /// A length over the limit, or one longer than the data: an error reply and an exit, never
    /// a wait for bytes that will not come; an empty stdin: a quiet exit.
    @Test func framesItCannotReadEndItCleanly() throws {
        let h = try Harness()
        let huge = withUnsafeBytes(of: UInt32(50_000_000)) { Data($0) } + Data("{".utf8)
        let over = try Self.exchange(h, huge)
        #expect(over.status == 1 && (over.replies.first?["error"] as? String)?.contains("50000000 bytes") == true, "\(over.replies)")
        let cut = try Self.exchange(h, withUnsafeBytes(of: UInt32(100)) { Data($0) } + Data(#"{"type":"#.utf8))
        #expect(cut.status == 1 && (cut.replies.first?["error"] as? String)?.contains("truncated") == true, "\(cut.replies)")
        let none = try Self.exchange(h, Data())
        #expect(none.status == 0 && none.replies.isEmpty)
    }
}

/// The extension's rules (browser/rules.js) as they are, under gjs: no browser here decides
/// which downloads go to Ferry or what is sent for one.
@Suite struct ExtensionRulesTests {
    @Test func theRulesChooseAndSendWhatTheyShould() throws {
        let h = try Harness()
        let r = try h.run("/usr/bin/gjs", ["-m", Harness.packageRoot + "/Tests/Support/extension-rules.js"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// The manifests name the extension's fixed ids: Chromium's from the manifest's key, and
    /// Firefox's gecko id; the host's manifests allow exactly those.
    @Test func theHostAllowsTheExtensionsOwnIdsOnly() throws {
        let root = Harness.packageRoot
        let ext = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/browser/manifest.json"))) as? [String: Any])
        let encoded = try #require(ext["key"] as? String)
        let key = try #require(Data(base64Encoded: encoded))
        let digest = try h256(key).prefix(16)
        let id = String(digest.flatMap { [$0 >> 4, $0 & 15] }.map { Character(UnicodeScalar(UInt8(ascii: "a") + $0)) })
        let chromium = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/desktop/dev.ferry.browser.chromium.json"))) as? [String: Any])
        #expect(chromium["allowed_origins"] as? [String] == ["chrome-extension://\(id)/"])
        let firefox = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/desktop/dev.ferry.browser.firefox.json"))) as? [String: Any])
        let gecko = ((ext["browser_specific_settings"] as? [String: Any])?["gecko"] as? [String: Any])?["id"] as? String
        let geckoID = try #require(gecko)
        #expect(firefox["allowed_extensions"] as? [String] == [geckoID])
        #expect(chromium["name"] as? String == "dev.ferry.browser" && firefox["name"] as? String == "dev.ferry.browser")
    }

    /// scripts/pack-extension: every file of browser/ at the archive's top, the same bytes
    /// from the same source.
    @Test func thePackedExtensionHoldsItsFiles() throws {
        let h = try Harness()
        let first = try h.run("/bin/bash", [Harness.packageRoot + "/scripts/pack-extension", h.root + "/a"])
        let second = try h.run("/bin/bash", [Harness.packageRoot + "/scripts/pack-extension", h.root + "/b"])
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)")
        let listed = try h.run("/usr/bin/env", ["python3", "-c", "import zipfile,sys; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))", h.root + "/a/ferry-extension.xpi"])
        let files = try FileManager.default.contentsOfDirectory(atPath: Harness.packageRoot + "/browser").sorted()
        #expect(listed.stdout.split(separator: "\n").map(String.init) == files && files.contains("manifest.json"))
        #expect(FileManager.default.contents(atPath: h.root + "/a/ferry-extension.zip") == FileManager.default.contents(atPath: h.root + "/b/ferry-extension.zip"))
    }

    /// SHA-256 by sha256sum (no crypto library in the tests).
    private func h256(_ data: Data) throws -> [UInt8] {
        let file = NSTemporaryDirectory() + "ferry-key-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let p = Process(), out = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        p.arguments = [file]
        p.standardOutput = out
        try p.run()
        let hex = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
        p.waitUntilExit()
        return stride(from: 0, to: 64, by: 2).map { i in
            UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
        }
    }
}

/// End to end with Debian's Chromium (headless, a private profile, the unpacked extension
/// loaded): a download that needs the site's session cookie goes to Ferry, which saves it with
/// the cookie sent, and the browser's own download is canceled (it never gets its name).
@Suite struct ChromiumHandOffTests {
    static let chromium = "/usr/bin/chromium"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: chromium), "needs chromium (scripts/install-deps --test)"))
    func aDownloadThatNeedsTheSessionGoesToFerry() throws {
        let h = try Harness()
        try h.startAgent()
        let port = try Harness.freePort(), log = h.root + "/site.log"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/cookie-site.py", String(port), log],
                                errors: h.root + "/site.err")
        try h.eventually("the site listening (Flask: scripts/install-deps --test)") { Harness.canConnect(port) }
        let profile = try Self.profile(h)
        let browser = try h.spawnWaitable(Self.chromium, Self.arguments(profile, "http://127.0.0.1:\(port)/login"),
                                          errors: h.root + "/chromium.err", environment: ["HOME": h.root + "/home"])
        defer { browser.terminate() }
        try h.eventually("Ferry's task", timeout: 60) {
            (try? JSONSerialization.jsonObject(with: Data(try h.ferry("list", "--json").stdout.utf8)) as? [[String: Any]])?
                .contains { $0["state"] as? String == "completed" } == true
        }
        let task = try #require((try JSONSerialization.jsonObject(with: Data(try h.ferry("list", "--json").stdout.utf8)) as? [[String: Any]])?.first)
        #expect(task["session"] as? String == "dev.ferry.browser" && task["description"] as? String == "From the browser")
        let saved = try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/statement.pdf"))
        #expect(saved.starts(with: Data("%PDF-1.4 statement ".utf8)) && saved.count == 19 + 256 * 800)
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let ferrys = try #require(requests.last, "no request of the file")
        #expect((ferrys["cookie"] as? String)?.contains("sid=s3cret-session") == true, "\(requests)")
        #expect((ferrys["agent"] as? String)?.contains("Chrome/") == true, "the browser's User-Agent: \(requests)")
        let browserDownloads = (try? FileManager.default.contentsOfDirectory(atPath: h.root + "/home/Downloads")) ?? []
        #expect(!browserDownloads.contains { $0.hasPrefix("statement") }, "the browser kept its copy: \(browserDownloads)")
        #expect(try h.ferry("list").stdout.contains("[from the browser]"))
    }

    /// Ferry cannot take it (no agent on the bus the host reaches): the browser keeps and
    /// finishes its own download.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: chromium), "needs chromium (scripts/install-deps --test)"))
    func whenFerryCannotTakeItTheBrowserKeepsIt() throws {
        let h = try Harness()
        let port = try Harness.freePort(), log = h.root + "/site.log"
        _ = try h.spawnWaitable("/usr/bin/env", ["python3", Harness.packageRoot + "/Tests/Support/cookie-site.py", String(port), log],
                                errors: h.root + "/site.err")
        try h.eventually("the site listening (Flask: scripts/install-deps --test)") { Harness.canConnect(port) }
        // The host, wrapped to leave a mark when the extension starts it: it was asked.
        let wrapper = h.root + "/host.sh"
        try "#!/bin/sh\ntouch '\(h.root)/asked'\nexec '\(Harness.browserHost)' \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        let profile = try Self.profile(h, host: wrapper)
        let browser = try h.spawnWaitable(Self.chromium, Self.arguments(profile, "http://127.0.0.1:\(port)/login"),
                                          errors: h.root + "/chromium.err",
                                          environment: ["HOME": h.root + "/home", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(h.root)/no-bus"])
        defer { browser.terminate() }
        try h.eventually("the browser's own copy", timeout: 60) {
            FileManager.default.contents(atPath: h.root + "/home/Downloads/statement.pdf")?.count == 19 + 256 * 800
        }
        #expect(FileManager.default.fileExists(atPath: h.root + "/asked"), "the extension never asked Ferry")
    }

    /// A private profile whose native messaging host is this build's.
    static func profile(_ h: Harness, host: String = Harness.browserHost) throws -> String {
        let profile = h.root + "/chromium", hosts = profile + "/NativeMessagingHosts"
        try FileManager.default.createDirectory(atPath: hosts, withIntermediateDirectories: true)
        let manifest = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.browser.chromium.json", encoding: .utf8)
            .replacingOccurrences(of: "@HOST@", with: host)
        try manifest.write(toFile: hosts + "/dev.ferry.browser.json", atomically: true, encoding: .utf8)
        return profile
    }

    static func arguments(_ profile: String, _ url: String) -> [String] {
        ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
         "--disable-features=DisableLoadExtensionCommandLineSwitch", "--load-extension=\(Harness.packageRoot)/browser", url]
    }
}
