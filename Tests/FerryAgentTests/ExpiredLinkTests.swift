import FerryCore
import Foundation
import Testing

/// A signed link that expired: nginx's secure_link answers 410 Gone. The failure says so (the
/// error name stays NotFound: scripts know 410 under it).
@Suite struct ExpiredLinkTests {
    /// nginx's secure_link as a signed-link service uses it; a link is also gone once its
    /// signature is listed in revoked/ (an expiry the test can cause when it needs to).
    static func startSigningNginx(_ h: Harness) throws {
        try h.startNginx(locations: """
            location /signed/ {
                secure_link $arg_md5,$arg_expires;
                secure_link_md5 "$secure_link_expires$uri secret";
                if ($secure_link = "") { return 403; }
                if ($secure_link = "0") { return 410; }
                if (-f \(h.root)/revoked/$arg_md5) { return 410; }
                limit_rate 100k;
            }
            """)
        try FileManager.default.createDirectory(atPath: h.root + "/revoked", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: h.www + "/signed", withIntermediateDirectories: true)
    }

    /// A link to `path` valid until `expires`, signed as nginx's secure_link_md5 wants it.
    static func signedLink(_ h: Harness, _ path: String, expires: Int) throws -> (url: String, md5: String) {
        let md5 = try h.run("/bin/sh", ["-c", "printf '%s' '\(expires)\(path) secret' | openssl md5 -binary | openssl base64 | tr +/ -_ | tr -d ="])
            .stdout.trimmingSpaces
        return ("http://127.0.0.1:\(h.nginxPort)\(path)?md5=\(md5)&expires=\(expires)", md5)
    }

    /// nginx's requests for `path`: uri, Range, If-Range, status.
    static func requests(_ h: Harness, _ path: String) throws -> [[String]] {
        try String(contentsOfFile: h.root + "/nginx/logs/validators.log", encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
            .filter { $0.first?.hasPrefix(path + "?") == true }
    }

    @Test func aGoneLinkIsNamedGoneNotNotFound() throws {
        let h = try Harness()
        try Self.startSigningNginx(h)
        try h.makeFile("signed/report.pdf", size: 10_000)
        try h.startAgent()
        // A link that expired a minute ago.
        let link = try Self.signedLink(h, "/signed/report.pdf", expires: Int(Date().timeIntervalSince1970) - 60)
        let r = try h.ferry("download", "--wait", "--dir", h.root + "/got", link.url)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("HTTP 410: gone") && r.stderr.contains("expired") && !r.stderr.contains("not found"),
                "\(r.stderr)")
        let log = try String(contentsOfFile: h.root + "/nginx/logs/validators.log", encoding: .utf8)
        #expect(log.split(separator: "\n").last?.hasSuffix("|410") == true, "secure_link refused the link: \(log)")
    }

    /// A link that expired mid-download (410) fails with its bytes kept; `ferry set-url` gives
    /// it a fresh link to the same file, and the rest comes from there (206 with If-Range).
    @Test func aFreshLinkContinuesTheBytesOfAnExpiredOne() throws {
        let h = try Harness()
        try Self.startSigningNginx(h)
        let body = try h.makeFile("signed/report.pdf", size: 600_000)
        try h.startAgent()
        let now = Int(Date().timeIntervalSince1970)
        let first = try Self.signedLink(h, "/signed/report.pdf", expires: now + 3600)
        let id = try h.ferry("download", "--dir", h.root + "/got", first.url).taskID()
        try h.eventually("the first bytes") { ((try h.show(id)["received"] as? Int) ?? 0) >= 100_000 }
        _ = try h.ferry("pause", "\(id)")
        FileManager.default.createFile(atPath: h.root + "/revoked/" + first.md5, contents: Data())  // it expires
        _ = try h.ferry("resume", "\(id)")
        try h.eventually("the 410") { (try h.show(id)["state"] as? String) == "failed" }
        let held = try #require(try h.show(id)["received"] as? Int)
        #expect(held >= 100_000, "the bytes went with the link")

        let fresh = try Self.signedLink(h, "/signed/report.pdf", expires: now + 7200)
        let r = try h.ferry("set-url", "\(id)", fresh.url, "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("are kept if the server has the same file"), "\(r.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/got/report.pdf")) == body)
        let last = try #require(try Self.requests(h, "/signed/report.pdf").last)
        #expect(last[0].contains(fresh.md5) && last[1] == "bytes=\(held)-" && last[2].hasPrefix("\\x22") && last[3] == "206",
                "continued at \(held) with the ETag: \(last)")
    }

    /// The new link serves another file: the whole of it comes, and the log says it started over.
    @Test func aNewLinkToAnotherFileStartsOverAndSaysSo() throws {
        let h = try Harness()
        try Self.startSigningNginx(h)
        _ = try h.makeFile("signed/v1.bin", size: 600_000)
        let v2 = try h.makeFile("signed/v2.bin", size: 300_000)
        try h.startAgent()
        let now = Int(Date().timeIntervalSince1970)
        let id = try h.ferry("download", "--output", h.root + "/got.bin", try Self.signedLink(h, "/signed/v1.bin", expires: now + 3600).url)
            .taskID()
        try h.eventually("the first bytes") { ((try h.show(id)["received"] as? Int) ?? 0) >= 100_000 }
        _ = try h.ferry("pause", "\(id)")
        let r = try h.ferry("set-url", "\(id)", try Self.signedLink(h, "/signed/v2.bin", expires: now + 3600).url)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try h.show(id)["state"] as? String == "paused", "a paused task stays paused")
        _ = try h.ferry("resume", "\(id)")
        try h.eventually("the file") { (try h.show(id)["state"] as? String) == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/got.bin")) == v2)
        let last = try #require(try Self.requests(h, "/signed/v2.bin").last)
        #expect(last[1].hasPrefix("bytes=") && last[3] == "200", "asked for the rest, got the whole: \(last)")
        #expect(h.agentLog.contains("starting over"), "\(h.agentLog.suffix(2000))")
    }

    @Test func aNewURLIsCheckedAndTheTaskMustExist() throws {
        let h = try Harness()
        try h.startAgent()
        let bad = try h.ferry("set-url", "999", "ftp://example.org/f")
        #expect(bad.status == 2 && bad.stderr.contains("unsupported scheme"), "\(bad.stderr)")
        let missing = try h.ferry("set-url", "999", "https://example.org/f")
        #expect(missing.status == 2 && missing.stderr.contains("no task with id 999"), "\(missing.stderr)")
    }

    /// The window: New Link… on the failed row, the fresh link in the dialog, Use Link; the
    /// download continues from its bytes and completes.
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func aFreshLinkIsGivenInTheWindow() throws {
        let h = try Harness()
        try Self.startSigningNginx(h)
        let body = try h.makeFile("signed/slides.pdf", size: 300_000)
        try h.startNotificationServer()
        try h.startAgent()
        let now = Int(Date().timeIntervalSince1970)
        let first = try Self.signedLink(h, "/signed/slides.pdf", expires: now + 3600)
        let id = try h.ferry("download", "--dir", h.root + "/got", first.url).taskID()
        try h.eventually("the first bytes") { ((try h.show(id)["received"] as? Int) ?? 0) >= 100_000 }
        _ = try h.ferry("pause", "\(id)")
        FileManager.default.createFile(atPath: h.root + "/revoked/" + first.md5, contents: Data())
        _ = try h.ferry("resume", "\(id)")
        try h.eventually("the 410") { (try h.show(id)["state"] as? String) == "failed" }

        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("press", "slides.pdf", "New Link…")
        _ = try h.windowDriver("set", "Link", try Self.signedLink(h, "/signed/slides.pdf", expires: now + 7200).url)
        _ = try h.windowDriver("click", "Use Link")
        try h.eventually("completed") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/got/slides.pdf")) == body)
        #expect(try Self.requests(h, "/signed/slides.pdf").last?[3] == "206", "continued from its bytes")
    }
}
