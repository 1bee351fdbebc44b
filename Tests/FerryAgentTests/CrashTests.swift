import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// SQLite-style crash testing: the agent (a debug build) aborts at each named step of a
/// task's life (FERRY_CRASH_AT, see Sources/FerryAgent/Loop/CrashPoint.swift), restarts, and the
/// task must end as if nothing happened: the file byte-exact at its one final name, no
/// leftovers, each event once (by sequence number), no byte fetched twice beyond what was on disk.
@Suite(.serialized) struct CrashTests {
    static let steps = ["request-committed", "transfer-started", "response-began", "checkpoint-written:2",
                        "transfer-ended", "file-synced", "linked-into-place", "completion-committed",
                        "event-emitted", "acknowledged"]
    static let session = "dev.ferry.test.Crash"
    static let size = 3_000_000

    @Test(arguments: steps)
    func crashAtEveryStepLosesNothing(step: String) throws {
        try crash(at: step, destination: nil)
    }

    /// The same across file systems: the finished file is copied, then linked into place.
    @Test(.enabled(if: SmallDisk.available, SmallDisk.skipReason), arguments: ["file-synced", "linked-into-place", "completion-committed"])
    func crashWhileCopyingToAnotherDiskLosesNothing(step: String) throws {
        try crash(at: step, destination: 16 * 1024)
    }

    func crash(at step: String, destination diskKilobytes: Int?) throws {
        let h = try Harness()
        try h.startFaultServer()
        let folder = diskKilobytes == nil ? h.downloads : try h.mountSmallDisk(h.root + "/usb", kilobytes: diskKilobytes!).path
        let data = try h.makeFile("f.bin", size: Self.size)
        try h.startAgent(environment: ["FERRY_CRASH_AT": step])
        let c = try h.client()
        _ = try c.call("OpenSession", [.string(Self.session), .dict([:])])
        // Slow enough that the body takes several socket wake-ups (checkpoints).
        let url = h.faultURL("f.bin", step.hasPrefix("checkpoint") ? "rate=6000000" : "")
        var id = try? c.call("CreateDownload", [.string(Self.session), .string(url),
                                                 .dict(["directory": .string(folder)])]).first?.uint64Value
        var acked: UInt64 = 0
        if step == "acknowledged", let task = id {
            try h.eventually("completed") { (try? h.show(Int64(task))["state"] as? String) == "completed" }
            let events = try (try c.call("FetchEvents", [.string(Self.session), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
                .compactMap { try FetchedEvent(bus: $0)?.queued }
            acked = try #require(events.last?.seq)
            _ = try? c.call("AcknowledgeEvents", [.string(Self.session), .uint64(acked)])
        }
        let agent = try #require(h.agent)
        try h.eventually("the agent crashed at \(step)", timeout: 20) { !agent.isRunning }
        #expect(agent.terminationReason == .uncaughtSignal, "the agent did not reach \(step)")
        #expect(h.agentLog.contains("FERRY_CRASH_AT=\(step)"))
        let requestsBeforeRestart = try h.serverLog().count

        // The request was committed before the crash even when its reply never left.
        try h.startAgent()
        if id == nil {
            let tasks = try c.call("ListTasks", [.string(Self.session), .uint64(0), .uint32(0)]).first?.arrayValue ?? []
            #expect(tasks.count == 1)
            id = tasks.first?.dictValue?["id"]?.uint64Value
        }
        let task = try #require(id.map(Int64.init))
        // What was on disk at the crash (the staging file is untouched until the agent runs again
        // and the transfer restarts: read it from the server's side instead, below).
        try h.eventually("task \(task) completed after the restart") { (try h.show(task)["state"] as? String) == "completed" }

        // One file, byte-exact, at its own name; nothing left in staging or next to the file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["f.bin"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/f.bin")) == data)
        try h.eventually("staging cleaned up") { try FileManager.default.contentsOfDirectory(atPath: StateFolder(h.state).staging).isEmpty }

        // Bytes: every request after the restart starts where the bytes on disk ended, so the
        // bytes sent add up to the file once plus at most what was in flight at the crash.
        let log = try h.serverLog()
        if let resumed = log.dropFirst(max(requestsBeforeRestart, 1)).first {
            let before = log.prefix(max(requestsBeforeRestart, 1)).reduce(0) { $0 + $1.sent }
            #expect((resumed.rangeStart ?? 0) <= before)
            #expect(resumed.sent == Self.size - (resumed.rangeStart ?? 0))
        }
        if ["file-synced", "linked-into-place", "completion-committed", "acknowledged"].contains(step) {
            #expect(log.count == 1, "a finished download was fetched again: \(log)")
        }

        // Events: finished and completed exactly once (or, once acknowledged, never again).
        let events = try (try c.call("FetchEvents", [.string(Self.session), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
            .compactMap { try FetchedEvent(bus: $0)?.queued }
        let seqs = events.map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        #expect(seqs.allSatisfy { $0 > acked })
        let finished = events.filter { if case .finished = $0.event { return true }; return false }
        let completed = events.filter { if case .completed = $0.event { return true }; return false }
        let expectedCount = step == "acknowledged" ? 0 : 1
        #expect(finished.count == expectedCount, "\(events)")
        #expect(completed.count == expectedCount, "\(events)")
        if case .finished(let file, _)? = finished.first?.event { #expect(file == folder + "/f.bin") }
    }
}
