import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The seeds' apps in Examples/, run as a user would, against the real agent.
@Suite(.serialized) struct ExamplesTests {
    static var fetchPDF: String { Harness.buildDirectory + "/fetch-pdf" }
    static var podcast: String { Harness.buildDirectory + "/podcast" }

    @Test func fetchPDFDownloadsNotifiesMovesAndOpens() throws {
        let h = try Harness()
        try h.startNotificationServer()
        let (env, opened) = try h.pdfOpenerDesktop()
        try h.startAgent(["--popup-window-ms", "100"], environment: env)
        try h.startFaultServer()
        let pdf = Data("%PDF-1.4\n%fetch-pdf test\n".utf8) + (try h.makeFile("filler", size: 100_000))
        try pdf.write(to: URL(fileURLWithPath: h.www + "/paper.pdf"))
        let docs = h.root + "/Documents"
        let r = try h.run(Self.fetchPDF, [h.faultURL("paper.pdf", "rate=400000"), "--documents", docs], environment: env)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("100% (\(pdf.count) of \(pdf.count) bytes)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: docs + "/paper.pdf")) == pdf)
        #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == docs + "/paper.pdf\n")
        try h.eventually("the popup") { try h.popups().contains { $0.summary == "Download complete!" } }
        // The app took the file over: the popup offers no Open/Show pointing at the old place.
        #expect(try h.popups().first { $0.summary == "Download complete!" }?.actions == ["default", "Open"])
    }

    @Test func fetchPDFReportsAFailure() throws {
        let h = try Harness()
        try h.startAgent(["--no-popups"])
        try h.startFaultServer()
        let r = try h.run(Self.fetchPDF, [h.faultURL("missing.pdf"), "--documents", h.root + "/Documents"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("404"))
        let bad = try h.run(Self.fetchPDF, ["ftp://example.com/x.pdf"])
        #expect(bad.status != 0 && bad.stderr.contains("not an http(s) URL"))
    }

    func podcastTasks(_ client: BusClient) throws -> [TaskInfo] {
        try (try client.call("ListTasks", [.string("dev.ferry.examples.Podcast"), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
            .map { try TaskInfo(bus: $0.dictValue ?? [:]) }
    }

    func writeFeed(_ h: Harness, _ episodes: [(String, Int)], query: String) throws -> [String: Data] {
        var bodies: [String: Data] = [:]
        var items = ""
        for (name, size) in episodes {
            bodies[name] = try h.makeFile(name, size: size)
            items += """
                <item><title>Episode \(name)</title>
                <enclosure url="\(h.faultURL(name, query).replacingOccurrences(of: "&", with: "&amp;"))" length="\(size)" type="audio/mpeg"/></item>

                """
        }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Ferry test cast</title>
            \(items)</channel></rss>
            """.write(toFile: h.www + "/feed.xml", atomically: true, encoding: .utf8)
        return bodies
    }

    @Test func podcastListsTheFeed() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        _ = try writeFeed(h, [("one.mp3", 2_000_000), ("two.mp3", 1000)], query: "")
        let r = try h.run(Self.podcast, [h.faultURL("feed.xml")])
        #expect(r.status == 0)
        #expect(r.stdout.contains("1. Episode one.mp3 (2 MB)") && r.stdout.contains("2. Episode two.mp3"))
        // Nothing is downloaded by listing.
        #expect(try h.serverLog().allSatisfy { $0.path == "/feed.xml" })
    }

    /// Seed 002 end to end: the app dies mid-download, the agent finishes, relaunches it, and the
    /// relaunched app moves every episode and calls the completion handler. Nothing twice.
    @Test func podcastKilledMidDownloadIsRelaunchedToFinish() throws {
        let h = try Harness()
        try h.startAgent(["--max-per-host", "3"])   // all three episodes at once
        try h.startFaultServer()
        let sizes = [("ep1.mp3", 300_000), ("ep2.mp3", 200_000), ("ep3.mp3", 250_000)]
        let bodies = try writeFeed(h, sizes, query: "hold=50000")
        let episodes = h.root + "/Episodes"

        let app = Process()
        app.executableURL = URL(fileURLWithPath: Self.podcast)
        app.arguments = [h.faultURL("feed.xml"), "--download", "all", "--episodes", episodes]
        app.environment = h.environment
        app.standardOutput = FileHandle.nullDevice
        app.standardError = FileHandle.nullDevice
        try app.run()
        defer { if app.isRunning { kill(app.processIdentifier, SIGKILL) } }
        let client = try h.client()
        try h.eventually("three held downloads") {
            let tasks = try podcastTasks(client)
            return tasks.count == 3 && tasks.allSatisfy { $0.received == 50_000 }
        }
        kill(app.processIdentifier, SIGKILL)
        try h.waitForExit(app, "the app")

        try h.releaseHolds()
        try h.eventually("the relaunched app to finish handling", timeout: 60) {
            let info = try client.call("GetSession", [.string("dev.ferry.examples.Podcast")]).first?.dictValue ?? [:]
            return (info["finished-events"]?.int64Value ?? 0) > 0
        }
        for (name, _) in sizes {
            #expect(try Data(contentsOf: URL(fileURLWithPath: episodes + "/" + name)) == bodies[name], "\(name)")
        }
        #expect(h.agentLog.contains("launched \(Self.podcast)"))
        let info = try client.call("GetSession", [.string("dev.ferry.examples.Podcast")]).first?.dictValue ?? [:]
        #expect(info["pending-events"] == .uint32(0))
        // Nothing fetched twice: per episode the server sent exactly its size (a stalled hold may
        // have been resumed with a Range request, which is fine).
        let served = try h.serverLog().filter { $0.path.hasSuffix(".mp3") }
        for (name, size) in sizes {
            let requests = served.filter { $0.path == "/" + name }
            #expect(requests.map(\.sent).reduce(0, +) == size, "\(name): \(requests)")
            #expect(requests.dropFirst().allSatisfy { $0.rangeStart != nil && $0.rangeStart! > 0 })
        }

        // A second run finds everything on disk and downloads nothing.
        let again = try h.run(Self.podcast, [h.faultURL("feed.xml"), "--download", "all", "--episodes", episodes])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.components(separatedBy: "already downloaded").count == 4)
        #expect(try h.serverLog().filter { $0.path.hasSuffix(".mp3") }.count == served.count)
    }

    @Test func podcastDoesNotDownloadAnEpisodeInFlightTwice() throws {
        let h = try Harness()
        // The held episodes must not stall out while the apps start (CI saw a Range retry after the
        // default 3 s), so that "two requests" means "nothing fetched twice".
        try h.startAgent(["--stall-timeout", "60"])
        try h.startFaultServer()
        let bodies = try writeFeed(h, [("a.mp3", 100_000), ("b.mp3", 100_000)], query: "hold=10000")
        let episodes = h.root + "/Episodes"
        let first = try h.spawnWaitable(Self.podcast, [h.faultURL("feed.xml"), "--download", "1", "--episodes", episodes])
        let client = try h.client()
        try h.eventually("episode 1 in flight") { try podcastTasks(client).count == 1 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        // The app starts again and wants everything: episode 1 is in flight, only episode 2 starts.
        let second = try h.spawnWaitable(Self.podcast, [h.faultURL("feed.xml"), "--download", "all", "--episodes", episodes])
        try h.eventually("both in flight") { try podcastTasks(client).count == 2 }
        try h.releaseHolds()
        try h.waitForExit(second, "the second run")
        #expect(second.terminationStatus == 0)
        try h.eventually("both files") {
            bodies.allSatisfy { (name, body) in (try? Data(contentsOf: URL(fileURLWithPath: episodes + "/" + name))) == body }
        }
        #expect(try h.serverLog().filter { $0.path.hasSuffix(".mp3") }.count == 2)
    }
}
