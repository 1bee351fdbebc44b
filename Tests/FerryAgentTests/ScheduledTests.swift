import FerryBus
import FerryCore
import Foundation
import Testing

/// When queued tasks start: `--start-at` (the task waits, reason scheduled, until its time,
/// across a kill -9 of the agent, and only then fetches) and `--priority` (the higher first).
@Suite(.serialized) struct ScheduledTests {
    @Test func higherPriorityStartsFirstWithoutStoppingTheRunningOne() throws {
        let h = try Harness()
        for name in ["first", "low", "high", "middle"] { try h.makeFile("\(name).bin", size: 10_000) }
        try h.startFaultServer()
        try h.startAgent(["--max-transfers", "1"])
        func queue(_ name: String, _ extra: [String] = [], _ query: String = "") throws -> Int64 {
            let r = try h.run(Harness.ferry, ["download"] + extra + [h.faultURL("\(name).bin", query)])
            return try r.taskID()
        }
        let first = try queue("first", ["--priority", "0.1"], "hold=1000")
        try h.eventually("the first running") { try h.show(first)["state"] as? String == "running" }
        _ = try queue("low", ["--priority", "0.2"])
        let high = try queue("high", ["--priority", "0.9"])
        _ = try queue("middle")
        #expect(try h.show(high)["priority"] as? Double == 0.9)
        #expect(try h.show(first)["state"] as? String == "running")   // never stopped for a higher one
        try h.releaseHolds()
        try h.eventually("all four completed") {
            try ["first", "low", "high", "middle"].allSatisfy { name in
                try h.serverLog().contains { $0.path == "/\(name).bin" && $0.end != nil && $0.status == 200 }
            }
        }
        let order = try h.serverLog().filter { $0.status == 200 }.sorted { $0.start < $1.start }.map(\.path)
        #expect(order == ["/first.bin", "/high.bin", "/middle.bin", "/low.bin"])
        let bad = try h.run(Harness.ferry, ["download", "--priority", "2", h.faultURL("low.bin")])
        #expect(bad.status != 0 && bad.stderr.contains("--priority 2.0: must be from 0 to 1"))
    }

    @Test func aDownloadWaitsForItsStartTimeAcrossAKill() throws {
        let h = try Harness()
        try h.makeFile("late.bin", size: 10_000)
        try h.startFaultServer()
        try h.startAgent()
        let startAt = Int64(Date().timeIntervalSince1970) + 10   // room for a slow restart on a loaded machine
        let r = try h.ferry("download", "--start-at", String(startAt), h.faultURL("late.bin"))
        let id = try r.taskID()
        var info = try h.show(id)
        #expect(info["state"] as? String == "waiting")
        #expect(info["reason"] as? String == "scheduled")

        h.killAgent()
        try h.startAgent()
        info = try h.show(id)
        #expect(info["state"] as? String == "waiting" && info["reason"] as? String == "scheduled")
        try h.eventually("the download completed", timeout: 30) { try h.show(id)["state"] as? String == "completed" }
        // Nothing was fetched before its time.
        #expect(Date().timeIntervalSince1970 >= Double(startAt))
        #expect(try h.serverLog().filter { $0.path == "/late.bin" }.count == 1)

        let bad = try h.run(Harness.ferry, ["download", "--start-at", "teatime", h.faultURL("late.bin")])
        #expect(bad.status == 64 || bad.status == 2)
        #expect(bad.stderr.contains("--start-at 'teatime': not a time"))
    }

    /// --tries and --timeout: a refused port fails soon instead of retrying for 7 days.
    @Test func triesAndTimeoutGiveUp() throws {
        let h = try Harness()
        try h.startAgent()
        let closed = "http://127.0.0.1:\(try Harness.freePort())/nothing.bin"
        let tries = try h.run(Harness.ferry, ["download", "--tries", "2", "--wait", closed])
        #expect(tries.status == 1)
        #expect(tries.stderr.contains("failed: gave up after 2 attempts (last error:"), "\(tries.stderr)")
        let timeout = try h.run(Harness.ferry, ["download", "--timeout", "1s", "--wait", closed])
        #expect(timeout.status == 1)
        #expect(timeout.stderr.contains("gave up: the task's timeout was reached"), "\(timeout.stderr)")
        let bad = try h.run(Harness.ferry, ["download", "--timeout", "soon", closed])
        #expect(bad.status != 0 && bad.stderr.contains("--timeout 'soon': not a duration"))
    }
}
