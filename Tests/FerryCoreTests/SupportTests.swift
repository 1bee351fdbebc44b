import FoundationEssentials
import Testing
@testable import FerryCore

@Suite struct FileNamingTests {
    @Test(arguments: [
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..", nil),
        (".bashrc", "bashrc"),
        ("a/b\\c.txt", "a_b_c.txt"),
        ("evil\u{0}\u{1b}[31mname.pdf", "evil[31mname.pdf"),
        ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
        ("   ", nil),
        ("report.pdf", "report.pdf"),
    ] as [(String, String?)])
    func sanitize(raw: String, expected: String?) {
        #expect(FileNaming.sanitize(raw) == expected)
    }

    @Test func longNamesKeepTheirExtensionWithin255Bytes() {
        let name = FileNaming.sanitize(String(repeating: "é", count: 300) + ".pdf")!
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(".pdf"))
    }

    @Test func contentDisposition() {
        #expect(FileNaming.contentDispositionName("attachment; filename=\"a b.pdf\"") == "a b.pdf")
        #expect(FileNaming.contentDispositionName("attachment; filename=x.txt; filename*=UTF-8''%E2%82%AC%20rates.txt") == "€ rates.txt")
        #expect(FileNaming.contentDispositionName("inline") == nil)
        // RFC 8187's other charset, as browsers decode it.
        #expect(FileNaming.contentDispositionName("attachment; filename*=iso-8859-1'en'%A3%20rates.txt") == "£ rates.txt")
        #expect(FileNaming.contentDispositionName("attachment; filename*=ISO-8859-1''caf%E9.txt") == "café.txt")
    }

    /// As browsers name a download: the redirect's last segment, an extension from the type.
    @Test func aResponseNamesTheDownloadAsBrowsersDo() {
        let presigned = "http://s3.local/bucket/Invoice%202026-0042.pdf?X-Amz-Signature=abc"
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: presigned, taskURL: "http://app/files/42",
                                        contentType: "application/pdf") == "Invoice 2026-0042.pdf")
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: nil, taskURL: "http://h/video",
                                        contentType: "video/webm") == "video.webm")
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: nil, taskURL: "http://h/",
                                        contentType: "application/pdf; charset=binary") == "download.pdf")
        // Content-Disposition still wins; a name that has an extension keeps it; nothing more to say: nil.
        #expect(FileNaming.responseName(contentDisposition: "attachment; filename=r.csv", finalURL: presigned,
                                        taskURL: "http://app/files/42", contentType: "application/pdf") == "r.csv")
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: nil, taskURL: "http://h/a.tar.gz",
                                        contentType: "application/gzip") == nil)
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: nil, taskURL: "http://h/blob",
                                        contentType: "application/octet-stream") == nil)
        #expect(FileNaming.responseName(contentDisposition: nil, finalURL: "http://h/other/file.bin", taskURL: "http://h/file.bin",
                                        contentType: nil) == nil)
    }

    @Test func suggestedNameFallsBackToURLThenDefault() {
        #expect(FileNaming.suggestedFileName(contentDisposition: nil, url: "http://h/dir/My%20File.pdf?x=1") == "My File.pdf")
        #expect(FileNaming.suggestedFileName(contentDisposition: "../../x", url: "http://h/y") == "_.._x")
        #expect(FileNaming.suggestedFileName(contentDisposition: nil, url: "http://h/") == "download")
    }

    /// The name from a URL split as written is the one URLComponents' parse gives, for URLs a
    /// task can have (checked when made) and for the awkward ones.
    @Test(arguments: [
        "http://h/dir/My%20File.pdf?x=1", "HTTPS://Example.ORG:8443/a/b.tar.gz#frag", "http://h", "http://h/",
        "http://h?q=/x.pdf", "http://h#/x.pdf", "http://user:pw@h/x", "http://[::1]:8080/v6/file.bin",
        "http://h/a%zz.bin", "http://h/%FF.bin", "http://h/%E2%82%AC.txt", "http://h/a\"b<c>.txt", "http://h/caf\u{e9}.txt",
        "http://h/dir/sub/", "http://h//x//", "http://h/a;p=1/b.bin", "ftp://h/x.bin", "http:/h/x", "file:///tmp/x",
        "http://h/a b.pdf", "mailto:a@b",
    ])
    func urlNameMatchesAParse(url: String) {
        let parsed = URLComponents(string: url).flatMap { c -> String? in
            guard let last = c.percentEncodedPath.split(separator: "/").last else { return nil }
            return last.percentDecoded ?? String(last)
        }
        #expect(FileNaming.urlName(url) == parsed)
        if let parts = DownloadURL.plainParts(url), let c = URLComponents(string: url) {
            #expect(parts.origin.lowercased().hasPrefix((c.scheme ?? "?").lowercased() + "://"))
            #expect(parts.origin.lowercased().contains((c.host ?? "?").lowercased()))
        }
    }

    @Test func uniqueNeverReusesAnExistingName() {
        let taken: Set<String> = ["a.pdf", "a (1).pdf"]
        #expect(FileNaming.unique("a.pdf") { taken.contains($0) } == "a (2).pdf")
        #expect(FileNaming.unique("b") { _ in false } == "b")
    }
}

@Suite struct DownloadURLTests {
    @Test func acceptsHTTPAndHTTPS() throws {
        #expect(try DownloadURL.validate("https://Example.COM/x") == "example.com")
        #expect(try DownloadURL.validate("http://127.0.0.1:8080/f") == "127.0.0.1")
    }
    @Test(arguments: ["file:///etc/passwd", "ftp://h/f", "gopher://h"])
    func rejectsOtherSchemes(url: String) {
        #expect(throws: FerryError(.unsupportedScheme, "unsupported scheme '\(url.prefix { $0 != ":" })' in \(url): only http and https are supported")) {
            try DownloadURL.validate(url)
        }
    }
    @Test(arguments: ["", "not a url", "http://", "http:///path", "ht tp://x"])
    func rejectsGarbage(url: String) {
        do { _ = try DownloadURL.validate(url); Issue.record("accepted \(url)") }
        catch let e as FerryError { #expect(e.kind == .invalidURL) }
        catch { Issue.record("\(error)") }
    }
    @Test func printableHidesCredentials() {
        #expect(!DownloadURL.printable("https://user:secret@h/x").contains("secret"))
        #expect(!DownloadURL.printable("https://token@h").contains("token"))
        #expect(!DownloadURL.printable("ftp://a:b@h?q").contains("a:b"))
        // No credentials: left as it is (an "@" in the path or query is not user info).
        #expect(DownloadURL.printable("https://h/a@b?c=d@e") == "https://h/a@b?c=d@e")
        #expect(DownloadURL.printable("https://h/" + String(repeating: "x", count: 300)).utf8.count == 200)
    }
}

@Suite struct BackoffTests {
    @Test func growsAndCaps() {
        let b = Backoff(baseMilliseconds: 100, capMilliseconds: 1_000, jitter: 0)
        #expect(b.delayMilliseconds(attempt: 1, random: 0) == 100)
        #expect(b.delayMilliseconds(attempt: 3, random: 0) == 400)
        #expect(b.delayMilliseconds(attempt: 40, random: 0) == 1_000)
    }
    @Test func jitterStaysWithinBounds() {
        let b = Backoff(baseMilliseconds: 1_000, capMilliseconds: 1_000, jitter: 0.2)
        #expect(b.delayMilliseconds(attempt: 1, random: 0) == 800)
        #expect(b.delayMilliseconds(attempt: 1, random: 0.999_999) <= 1_200)
    }
    @Test func retryAfterWinsWhenLonger() {
        let b = Backoff(baseMilliseconds: 100, capMilliseconds: 1_000, jitter: 0)
        #expect(b.delayMilliseconds(attempt: 1, retryAfterSeconds: 5, random: 0) == 5_000)
        #expect(b.delayMilliseconds(attempt: 1, retryAfterSeconds: -3, random: 0) == 100)
    }
}

@Suite struct EventQueueTests {
    @Test func rollBackForgetsUncommittedEventsButNotTheirNumbers() {
        var q = EventQueue()
        q.append(task: 1, .finished(file: "/a", received: 1))
        q.append(task: 2, .progress(received: 5, expected: nil, written: 5))
        q.append(task: 2, .completed(error: nil, errorName: nil, resumable: false))
        q.rollBack(after: 1)
        #expect(q.fetch(after: 0, limit: 10).map(\.seq) == [1])
        #expect(q.count == 1 && q.lastSeq == 3)
        #expect(q.append(task: 2, .completed(error: nil, errorName: nil, resumable: false)).seq == 4)
        #expect(q.fetch(after: 0, limit: 10).map(\.seq) == [1, 4])
    }

    @Test func sequenceAndReplayUntilAcknowledged() {
        var q = EventQueue()
        q.append(task: 1, .resumed(offset: 5, expected: 10))
        q.append(task: 1, .finished(file: "/f", received: 10))
        #expect(q.fetch(after: 0, limit: 10).map(\.seq) == [1, 2])
        #expect(q.acknowledge(upTo: 1).map(\.seq) == [1])
        #expect(q.fetch(after: 0, limit: 10).map(\.seq) == [2])
    }

    @Test func newerProgressReplacesOlder() {
        var q = EventQueue()
        q.append(task: 1, .progress(received: 1, expected: nil, written: 1))
        q.append(task: 2, .progress(received: 1, expected: nil, written: 1))
        q.append(task: 1, .progress(received: 9, expected: nil, written: 8))
        let seqs = q.fetch(after: 0, limit: 10).map(\.seq)
        #expect(seqs == [2, 3])
        #expect(q.count == 2)
    }

    @Test func progressAfterDurableEventDoesNotJumpAhead() {
        var q = EventQueue()
        q.append(task: 1, .progress(received: 1, expected: nil, written: 1))
        q.append(task: 1, .finished(file: "/f", received: 1))
        q.append(task: 1, .progress(received: 2, expected: nil, written: 1))
        #expect(q.fetch(after: 0, limit: 10).map(\.event.kind) == ["progress", "finished", "progress"])
    }

    @Test func restoredQueueContinuesNumbering() {
        var q = EventQueue(lastSeq: 41, restored: [QueuedEvent(seq: 40, task: 1, event: .completed(error: nil, errorName: nil, resumable: false))])
        #expect(q.append(task: 1, .finished(file: "/x", received: 1)).seq == 42)
        #expect(q.fetch(after: 39, limit: 1).map(\.seq) == [40])
    }
}

@Suite struct ResumeDataTests {
    @Test func roundTrip() throws {
        let r = ResumeData(url: "http://h/f", task: 3, received: 10, expected: 20, etag: "\"e\"", lastModified: nil, suggestedName: nil)
        #expect(try ResumeData.decode(r.encoded()) == r)
    }
    @Test func garbageAndForeignBlobsAreRejectedClearly() {
        for blob in [Array("garbage".utf8), Array("{\"format\":\"other\"}".utf8),
                     Array("{\"format\":\"dev.ferry.resume-data\",\"version\":99}".utf8), []] {
            do { _ = try ResumeData.decode(blob); Issue.record("accepted \(blob)") }
            catch let e as FerryError { #expect(e.kind == .invalidResumeData) }
            catch { Issue.record("\(error)") }
        }
    }
}

@Suite struct SchedulerTests {
    @Test func perHostAndTotalLimits() {
        var s = Scheduler(maxTotal: 3, maxPerHost: 2)
        s.started(host: "a"); s.started(host: "a")
        #expect(!s.mayStart(host: "a"))
        #expect(s.mayStart(host: "b"))
        s.started(host: "b")
        #expect(!s.mayStart(host: "c"))
        #expect(s.fullHosts == ["a"])
        s.stopped(host: "a")
        #expect(s.mayStart(host: "a"))
    }
}

@Suite struct PopupPlanTests {
    @Test func singleCompletionNamesTheFile() {
        #expect(PopupPlan.plan([.completed(file: "/d/report.pdf")]) ==
                [PopupPlan(summary: "Download complete!", body: "report.pdf", category: "transfer.complete", file: "/d/report.pdf")])
    }
    @Test func burstsBecomeOnePopup() {
        let plans = PopupPlan.plan((1...1000).map { .completed(file: "/d/f\($0)") } + [.failed(name: "x", reason: "404")])
        #expect(plans.map(\.summary) == ["1000 downloads complete", "Download failed"])
        #expect(plans[0].body == "f1, f2, f3, …")
        #expect(plans[1].category == "transfer.error")
    }
    @Test func nothingEndedNothingShown() { #expect(PopupPlan.plan([]).isEmpty) }

    /// A failure has the error icon; grouped ones give the first with its reason and a count;
    /// a checksum failure says so in one line, without digests or the quarantine path.
    @Test func failuresSayWhatHappenedInOneLine() {
        let one = PopupPlan.plan([.failed(name: "iso.img", reason: "SHA-256 mismatch: expected " + String(repeating: "a", count: 64)
                                          + ", got " + String(repeating: "b", count: 64) + "; the bytes are kept apart in /s/q/4")])
        #expect(one[0].icon == "dialog-error" && one[0].body == "iso.img: not the file expected (its SHA-256 differs; ferry show has both)")
        let three = PopupPlan.plan([.failed(name: "a.bin", reason: "server answered HTTP 404"), .failed(name: "b.bin", reason: "x"),
                                    .failed(name: "c.bin", reason: "y")])
        #expect(three[0].summary == "3 downloads failed" && three[0].body == "a.bin: server answered HTTP 404 — and 2 more")
        #expect(PopupPlan.plan([.completed(file: "/d/a")])[0].icon == "folder-download")
        #expect(PopupPlan.plan([.noSpace(name: "a")])[0].icon == "dialog-warning")
    }

    /// Server-chosen names and reasons are escaped (the body is markup) and cut.
    @Test func namesAndReasonsAreEscapedAndCut() {
        let plans = PopupPlan.plan([.completed(file: "/d/<a href='x'>a&b.pdf"), .failed(name: "<img src=x>", reason: String(repeating: "f", count: 300))])
        #expect(plans[0].body == "&lt;a href=&#39;x&#39;&gt;a&amp;b.pdf")
        #expect(plans[1].body.hasPrefix("&lt;img src=x&gt;: fff") && plans[1].body.hasSuffix("…") && plans[1].body.count < 170)
        let long = PopupPlan.plan([.completed(file: "/d/" + String(repeating: "n", count: 200) + ".tar.gz")])[0].body
        #expect(long.count == 60 && long.hasSuffix("nnn.tar.gz") && long.contains("…"))
    }

    /// A sandboxed app's file is not the host's to open: no Open action on it; a click starts the app.
    @Test func anAppsCompletionOpensNoFileOnTheHost() {
        let plan = PopupPlan.plan([.completed(file: "/home/u/.var/app/org.x/invoice.pdf", appSession: "org.x.bg")])
        #expect(plan == [PopupPlan(summary: "Download complete!", body: "invoice.pdf", category: "transfer.complete", file: nil,
                                   appSession: "org.x.bg")])
    }
}

@Suite struct SessionKeyTests {
    @Test func anAliasReadsAsTheAppsOwnName() {
        let key = SessionKey.alias("org.x.Child.Bg", app: "org.x.Child")
        #expect(key == "org.x.Child.Bg [org.x.Child]")
        #expect(SessionKey.name(of: key, app: "org.x.Child") == "org.x.Child.Bg")
        #expect(SessionKey.name(of: key, app: "org.x") == key)   // another app's alias is not its name
        #expect(SessionKey.name(of: "org.x.bg", app: "org.x") == "org.x.bg")
        #expect(throws: FerryError.self) { try AgentCore.validateSessionIdentifier(key) }   // no caller can name one
    }
}
