import FerryBus
import FerryCore
import Foundation
import Testing

/// `ferry download --start-at`: the task waits (reason scheduled) until its time, across a
/// kill -9 of the agent, and only then fetches.
@Suite(.serialized) struct ScheduledTests {
    @Test func aDownloadWaitsForItsStartTimeAcrossAKill() throws {
        let h = try Harness()
        try h.makeFile("late.bin", size: 10_000)
        try h.startFaultServer()
        try h.startAgent()
        let startAt = Int64(Date().timeIntervalSince1970) + 4
        let r = try h.ferry("download", "--start-at", String(startAt), h.faultURL("late.bin"))
        let id = try #require(Int64(r.stdout.split(separator: "\n").first ?? ""), "\(r.stderr)")
        var info = try h.show(id)
        #expect(info["state"] as? String == "waiting")
        #expect(info["reason"] as? String == "scheduled")

        h.killAgent()
        try h.startAgent()
        info = try h.show(id)
        #expect(info["state"] as? String == "waiting" && info["reason"] as? String == "scheduled")
        try h.eventually("the download completed", timeout: 20) { try h.show(id)["state"] as? String == "completed" }
        // Nothing was fetched before its time.
        #expect(Date().timeIntervalSince1970 >= Double(startAt))
        #expect(try h.serverLog().filter { $0.path == "/late.bin" }.count == 1)

        let bad = try h.run(Harness.ferry, ["download", "--start-at", "teatime", h.faultURL("late.bin")])
        #expect(bad.status == 64 || bad.status == 2)
        #expect(bad.stderr.contains("--start-at 'teatime': not a time"))
    }
}
