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
        // e.g. "[########          ] 600.0 kB/1.5 MB (40%) 490.1 kB/s, 2 s left"
        #expect(r.stdout.range(of: #"kB/s, \d+ s left"#, options: .regularExpression) != nil, "\(r.stdout)")
        #expect(r.stdout.contains("saved to "))
    }
}
