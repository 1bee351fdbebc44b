import FerryBus
import FerryCore
import Foundation
import Testing

/// `ferry download --wait` on a terminal (a pseudo-terminal from script(1)) draws a progress
/// bar with the rate and the time left.
@Suite(.serialized) struct ProgressBarTests {
    @Test func theBarShowsRateAndTimeLeft() throws {
        let h = try Harness()
        try h.makeFile("paced.bin", size: 1_500_000)
        try h.startFaultServer()
        try h.startAgent()
        let url = h.faultURL("paced.bin", "rate=500000")
        let r = try h.run("/usr/bin/script", ["-qec", "\(Harness.ferry) download --wait '\(url)'", "/dev/null"])
        #expect(r.status == 0, "\(r.stdout)")
        // e.g. "[########          ] 600.0 kB/1.5 MB (40%) 490.1 kB/s, 2 s left": the speed in the
        // sizes' units (one system a line, issue 57 item 10)
        #expect(r.stdout.range(of: #"kB/s, \d+ s left"#, options: .regularExpression) != nil, "\(r.stdout)")
        #expect(!r.stdout.contains("iB"), "\(r.stdout)")
        #expect(r.stdout.contains("saved to "))
    }

    /// `ferry watch` shows an upload as it shows a download: sent bytes, rate, time left.
    @Test func watchShowsAnUploadsRateAndTimeLeft() throws {
        let h = try Harness()
        try h.makeFile("up.bin", size: 1_000_000)
        try h.startFaultServer()
        try h.startAgent()
        let r = try h.ferry("upload", h.www + "/up.bin", h.faultURL("upload/up.bin"), "--resumable", "none", "--max-rate", "250K")
        #expect(r.status == 0, "\(r.stderr)")
        let screen = h.root + "/watch.txt"
        let watch = try h.spawnWaitable(Harness.ferry, ["watch", "--exit-when-idle"], output: screen)
        try h.waitForExit(watch, "ferry watch")
        let text = try String(contentsOfFile: screen, encoding: .utf8)
        // e.g. "1      running               25% 256.0 kB/1.0 MB  250.1 kB/s, 3 s left ↑ http://…/upload/up.bin"
        #expect(text.range(of: #"kB/s, \d+ s left.*↑ http"#, options: .regularExpression) != nil, "\(text)")
    }
}
