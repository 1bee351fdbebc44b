import FerryBus
import FerryCore
import Foundation
import Testing

/// The user's download limit (setting download-limit) holds a transfer from a fast loopback
/// server back, and lifting it while the transfer runs lets it finish at full speed.
/// (How exactly the limit is kept and shared is measured in Benchmarks/run's limit case.)
@Suite(.serialized) struct BandwidthTests {
    /// A task's own max-rate holds it back with no overall limit set.
    @Test func aTasksMaxRateHoldsItBack() throws {
        let h = try Harness()
        try h.makeFile("capped.bin", size: 1_000_000)
        try h.startFaultServer()
        try h.startAgent()
        let r = try h.ferry("download", "--max-rate", "100K", h.faultURL("capped.bin"))
        let id = try r.taskID()
        try h.eventually("the download running") { try h.show(id)["state"] as? String == "running" }
        let began = Date()
        try h.eventually("300 kB received") { (try h.show(id)["received"] as? Int ?? 0) >= 300_000 }
        #expect(Date().timeIntervalSince(began) > 1.5)
        #expect(try h.show(id)["max-rate"] as? Int == 102_400)
    }

    /// The upload limit holds what an upload sends (the same bucket, in curl's read callback).
    @Test func theUploadLimitHoldsAnUpload() throws {
        let h = try Harness()
        h.useMemoryBackend()
        let file = h.root + "/up.bin"
        try Data(repeating: 7, count: 600_000).write(to: URL(fileURLWithPath: file))
        try h.startFaultServer()
        try h.config("set", "upload-limit", "100K")
        try h.startAgent()
        let r = try h.ferry("upload", file, h.faultURL("upload/up.bin"))
        let id = try r.taskID()
        try h.eventually("the upload running") { try h.show(id)["state"] as? String == "running" }
        let began = Date()
        try h.eventually("completed", timeout: 20) { try h.show(id)["state"] as? String == "completed" }
        // 600 kB at 100 KiB/s: about 6 s (unlimited: milliseconds).
        #expect(Date().timeIntervalSince(began) > 3)
    }

    @Test func theDownloadLimitHoldsAndLiftsWhileRunning() throws {
        let h = try Harness()
        h.useMemoryBackend()
        try h.makeFile("big.bin", size: 4_000_000)
        try h.startFaultServer()
        try h.config("set", "download-limit", "100K")
        try h.startAgent()
        let r = try h.ferry("download", h.faultURL("big.bin"))
        let id = try r.taskID()
        try h.eventually("the download running") { try h.show(id)["state"] as? String == "running" }
        let began = Date()
        try h.eventually("300 kB received") { (try h.show(id)["received"] as? Int ?? 0) >= 300_000 }
        // At 100 KiB/s 300 kB take about 3 s (curl may start with one buffer's worth at once);
        // unlimited, the whole file takes milliseconds on loopback.
        #expect(Date().timeIntervalSince(began) > 1.5)
        #expect(try h.show(id)["state"] as? String == "running")

        try h.config("set", "download-limit", "0")
        // The rest (3.7 MB) would take 36 s at the old limit.
        try h.eventually("completed once the limit is lifted", timeout: 15) { try h.show(id)["state"] as? String == "completed" }
    }
}
