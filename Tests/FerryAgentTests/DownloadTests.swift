import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The real agent on a private bus against real HTTP servers on loopback.
@Suite(.serialized) struct DownloadTests {
    @Test func downloadFromNginxIsByteExact() throws {
        let h = try Harness()
        try h.startNginx()
        try h.startAgent(umask: "027")
        let data = try h.makeFile("report.pdf", size: 3_000_000)
        let r = try h.ferry("download", "http://127.0.0.1:\(h.nginxPort)/report.pdf", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let info = try h.show(id)
        #expect(info["state"] as? String == "completed")
        #expect(info["received"] as? Int == 3_000_000)
        #expect(info["expected"] as? Int == 3_000_000)
        #expect(info["error"] is NSNull)
        let file = try #require(info["file"] as? String)
        #expect(file == h.downloads + "/report.pdf")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o640)   // the umask it was started with (027 below)
        #expect(stat(h.state, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat(StateFolder(h.state).store, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    /// An empty body never reaches curl's write callback: its head still goes to the core,
    /// which decides, and the attempt ends after it (an empty file, completed).
    @Test func anEmptyFileCompletes() throws {
        let h = try Harness()
        try h.startNginx()
        try h.startAgent()
        _ = try h.makeFile("empty.txt", size: 0)
        let r = try h.ferry("download", "http://127.0.0.1:\(h.nginxPort)/empty.txt", "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let info = try h.show(id)
        #expect(info["state"] as? String == "completed" && info["received"] as? Int == 0 && info["expected"] as? Int == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/empty.txt")).isEmpty)
    }

    @Test func tlsIsVerified() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true)
        try h.makeFile("t.bin", size: 10_000)
        let url = "https://127.0.0.1:\(h.nginxPort)/t.bin"
        // An untrusted (self-signed) certificate fails for good, with the reason.
        try h.startAgent()
        let bad = try h.ferry("download", url, "--wait")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("TLS"), "\(bad.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).isEmpty)
        // Trusting that certificate makes the same download work.
        h.killAgent(signal: SIGTERM)
        try h.startAgent(["--ca-file", cert])
        let good = try h.ferry("download", url, "--wait")
        #expect(good.status == 0, "\(good.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.downloads + "/t.bin"))
    }

    @Test func redirectsAreFollowedButBounded() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("rr.bin", size: 5_000)
        let ok = try h.ferry("download", h.faultURL("rr.bin", "redirect=3"), "--wait")
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/rr.bin")) == data)
        let loop = try h.ferry("download", h.faultURL("rr.bin", "redirect=50"), "--wait")
        #expect(loop.status == 1 && loop.stderr.contains("redirects"), "\(loop.stderr)")
        let ftp = try h.ferry("download", h.faultURL("rr.bin", "location=ftp://127.0.0.1/x"), "--wait")
        #expect(ftp.status == 1 && ftp.stderr.contains("unsupported protocol"), "\(ftp.stderr)")
    }

    @Test func existingFileIsNeverOverwritten() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("a.txt", size: 1000)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: h.downloads + "/a.txt"))
        let r = try h.ferry("download", h.faultURL("a.txt"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try String(contentsOfFile: h.downloads + "/a.txt", encoding: .utf8) == "mine")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/a (1).txt")) == data)
        // --wait says where the file went (stderr; stdout stays the task id).
        #expect(r.stderr.contains("saved to \(h.downloads)/a (1).txt\n"), "\(r.stderr)")
        #expect(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
        // --output to an existing path also keeps the old file.
        let o = try h.ferry("download", h.faultURL("a.txt"), "--output", h.downloads + "/a.txt", "--wait")
        #expect(o.status == 0, "\(o.stderr)")
        #expect(try String(contentsOfFile: h.downloads + "/a.txt", encoding: .utf8) == "mine")
        #expect(FileManager.default.fileExists(atPath: h.downloads + "/a (2).txt"))
    }

    @Test(arguments: [SIGKILL, SIGTERM])
    func agentStoppedMidDownloadResumesWithOnlyTheMissingBytes(signal: Int32) throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let size = 2_000_000, holdAt = 700_000
        let data = try h.makeFile("big.bin", size: size)
        let r = try h.ferry("download", h.faultURL("big.bin", "hold=\(holdAt)"))
        let id = try #require(Int64(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        // The server stops sending at holdAt; wait until the agent has written all of it.
        try h.eventually("agent received \(holdAt) bytes") { (try h.show(id)["received"] as? Int) == holdAt }
        h.killAgent(signal: signal)
        try h.releaseHolds()
        try h.startAgent()
        let w = try h.ferry("download", h.faultURL("big.bin"), "--wait")   // a second, unrelated download
        #expect(w.status == 0)
        try h.eventually("task \(id) completed") { (try h.show(id)["state"] as? String) == "completed" }
        let file = try #require(try h.show(id)["file"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        let requests = try h.serverLog().filter { $0.path == "/big.bin" && $0.query.hasPrefix("hold") }
        #expect(requests.count == 2)
        #expect(requests.first?.range == nil)
        #expect(requests.last?.rangeStart == holdAt, "second request: \(String(describing: requests.last))")
        #expect(requests.last?.if_range != nil)
        #expect(requests.last?.sent == size - holdAt)
    }

    @Test func stalledTransferIsRetriedFromWhereItStopped() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()   // --stall-timeout 3
        let data = try h.makeFile("s.bin", size: 300_000)
        let r = try h.ferry("download", h.faultURL("s.bin", "hold=120000"), "--wait")   // never released
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/s.bin")) == data)
        let log = try h.serverLog()
        #expect(log.count == 2)
        #expect(log.first?.held == 120_000)
        #expect(log.last?.rangeStart == 120_000)
    }

    @Test func serverIgnoringRangeStillGivesTheRightBytes() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("n.bin", size: 500_000)
        let r = try h.ferry("download", h.faultURL("n.bin", "norange=1&drop=200000"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: h.downloads)
        #expect(files == ["n.bin"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/n.bin")) == data)
        let log = try h.serverLog()
        #expect(log.count == 2)
        #expect(log.last?.rangeStart == 200_000)   // it asked for the rest…
        #expect(log.last?.status == 200)          // …got the whole entity, and restarted cleanly
    }

    @Test func changedETagRestartsFromZero() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("e.bin", size: 400_000)
        let r = try h.ferry("download", h.faultURL("e.bin", "etag=changing&drop=100000"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/e.bin")) == data)
        let log = try h.serverLog()
        #expect(log.count == 2)
        #expect(log.last?.if_range == "\"v1-\(log.last!.if_range!.dropFirst(4).dropLast())\"")
        #expect(log.last?.status == 200)
    }

    @Test func retryAfterIsHonoured() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()   // retry base 100 ms: without Retry-After it would come back at once
        try h.makeFile("r.bin", size: 1000)
        let r = try h.ferry("download", h.faultURL("r.bin", "status=503&times=1&retry_after=2"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        let log = try h.serverLog()
        #expect(log.map(\.status) == [503, 200])
        #expect(log[1].start - log[0].end! >= 1.9, "retried after \(log[1].start - log[0].end!) s")
    }

    @Test func notFoundFailsWithAClearReason() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let r = try h.ferry("download", h.faultURL("missing.bin"), "--wait")
        #expect(r.status == 1)
        #expect(r.stderr.contains("404"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).isEmpty)
    }

    @Test func checksumMismatchFails() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("c.bin", size: 1000)
        let r = try h.ferry("download", h.faultURL("c.bin"), "--sha256", String(repeating: "0", count: 64), "--wait")
        #expect(r.status == 1)
        #expect(r.stderr.contains("SHA-256 mismatch"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads).isEmpty)
    }

    @Test func uploadFromTheCommandLine() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let payload = try h.makeFile("notes.bin", size: 123_456)
        let r = try h.ferry("upload", h.www + "/notes.bin", h.faultURL("upload/notes.bin"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/notes.bin")) == payload)
        let id = try r.taskID()   // the reply follows
        let shown = try h.ferry("show", String(id))
        #expect(shown.stdout.contains("upload:   PUT of \(h.www)/notes.bin"))
        let post = try h.ferry("upload", h.www + "/notes.bin", h.faultURL("upload/posted.bin"), "--method", "POST", "--wait")
        #expect(post.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/posted.bin")) == payload)
        let missing = try h.ferry("upload", h.root + "/nope", h.faultURL("upload/x"))
        #expect(missing.status == 2 && missing.stderr.contains("not a readable regular file"))
        let refused = try h.ferry("upload", h.www + "/notes.bin", h.faultURL("nowhere/x"), "--wait")
        #expect(refused.status == 1 && refused.stderr.contains("404"))
    }

    @Test func manySmallFilesReuseConnections() throws {
        let h = try Harness()
        try h.startNginx()
        try h.startAgent(["--max-transfers", "16", "--max-per-host", "16"])
        var requests: [Value] = []
        for i in 0..<400 {
            try h.makeFile("s\(i).bin", size: 4_096)
            requests.append(.tuple([.string("http://127.0.0.1:\(h.nginxPort)/s\(i).bin"), .dict([:])]))
        }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Small"), .dict(["keep-events": .bool(false)])])
        _ = try c.call("CreateDownloads", [.string("dev.ferry.test.Small"), .array(requests, elementType: "(sa{sv})")])
        try h.eventually("400 files") { try FileManager.default.contentsOfDirectory(atPath: h.downloads).count == 400 }
        // At most as many connections as transfers run at once: finished transfers hand theirs on.
        let (served, connections) = try h.nginxConnections()
        #expect(served == 400)
        #expect(connections <= 16, "\(connections) connections for 400 requests")
    }

    /// Over HTTPS with HTTP/2, transfers to one host share one connection (multiplexed
    /// streams): a start waits for the connection being set up instead of opening another.
    @Test func http2CarriesManyTransfersOnOneConnection() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true, http2: true)
        try h.startAgent(["--max-transfers", "16", "--max-per-host", "16", "--ca-file", cert])
        var requests: [Value] = []
        for i in 0..<64 {
            try h.makeFile("m\(i).bin", size: 16_384)
            requests.append(.tuple([.string("https://127.0.0.1:\(h.nginxPort)/m\(i).bin"), .dict([:])]))
        }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.H2"), .dict(["keep-events": .bool(false)])])
        _ = try c.call("CreateDownloads", [.string("dev.ferry.test.H2"), .array(requests, elementType: "(sa{sv})")])
        try h.eventually("64 files") { try FileManager.default.contentsOfDirectory(atPath: h.downloads).count == 64 }
        let (served, connections) = try h.nginxConnections()
        #expect(served == 64)
        #expect(connections == 1, "\(connections) connections for 64 requests over HTTP/2")
    }

    /// `ferry download --dir` makes a folder that is not there yet (0700, parents too), as
    /// `curl --create-dirs` does; an existing one keeps its mode.
    @Test func theCLIMakesAMissingDirectory() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("new.bin", size: 3_000)
        let folder = h.root + "/home/made/by/ferry"
        let r = try h.ferry("download", "--dir", folder, h.faultURL("new.bin"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/new.bin"))
        let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let existing = h.root + "/home/open"
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        #expect(try h.ferry("download", "--dir", existing, h.faultURL("new.bin"), "--wait").status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: existing)[.posixPermissions] as? Int == 0o755)
    }
}

/// Two transfers to one plain-http host start together: the second has a connection of its own
/// at once, not after the first's answer ends (curl's wait for a multiplexed connection is for
/// https only: over http it held the second until the first, here held by the server, ended).
@Suite struct PlainHTTPConnectionTests {
    @Test func aSlowTransferDoesNotHoldAnotherToTheSameHost() throws {
        let h = try Harness()
        try h.startAgent(["--max-per-host", "2"])
        try h.startFaultServer()
        try h.makeFile("slow.bin", size: 100_000)
        try h.makeFile("quick.bin", size: 10_000)
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("pair"), .dict(["keep-events": .bool(false)])])
        let out = h.root + "/got"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let requests: [Value] = [.tuple([.string(h.faultURL("slow.bin", "hold=1000")), .dict(["directory": .string(out)])]),
                                 .tuple([.string(h.faultURL("quick.bin")), .dict(["directory": .string(out)])])]
        let ids = try #require(try c.call("CreateDownloads", [.string("pair"), .array(requests, elementType: "(sa{sv})")]).first?.arrayValue)
        let quick = try #require(ids.last?.int64Value)
        try h.eventually("the quick one completed") { try h.show(quick)["state"] as? String == "completed" }
        // In one attempt: not after a stall (the agent stops a silent transfer after 3 s here).
        #expect(try h.show(quick)["attempts"] as? Int == 0)
        #expect(try h.serverLog().filter { $0.path == "/quick.bin" }.count == 1)
        try h.releaseHolds()
    }

    /// The same over https from an HTTP/1.1 server (ALPN says so at once): no waiting either.
    @Test func aSlowTransferDoesNotHoldAnotherOverHTTPSWithoutHTTP2() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true)
        try h.startAgent(["--max-per-host", "2", "--ca-file", cert])
        try FileManager.default.createDirectory(atPath: h.www + "/slow", withIntermediateDirectories: true)
        try h.makeFile("slow/big.bin", size: 400_000)
        try h.makeFile("quick.bin", size: 10_000)
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("pair"), .dict(["keep-events": .bool(false)])])
        let base = "https://127.0.0.1:\(h.nginxPort)"
        let requests: [Value] = [.tuple([.string(base + "/slow/big.bin"), .dict(["directory": .string(h.downloads)])]),
                                 .tuple([.string(base + "/quick.bin"), .dict(["directory": .string(h.downloads)])])]
        let ids = try #require(try c.call("CreateDownloads", [.string("pair"), .array(requests, elementType: "(sa{sv})")]).first?.arrayValue)
        let (slow, quick) = (try #require(ids.first?.int64Value), try #require(ids.last?.int64Value))
        try h.eventually("the quick one completed") { try h.show(quick)["state"] as? String == "completed" }
        #expect(try h.show(quick)["attempts"] as? Int == 0)
        #expect(try h.show(slow)["state"] as? String == "running")   // 400 kB at 20 kB/s: still going
        _ = try c.call("Cancel", [.uint64(UInt64(slow))])
    }
}
