import FerryBus
import Foundation
import Testing

/// The agent's transfers run on threads of their own (`FERRY_TRANSFER_THREADS` chooses how
/// many): the loop keeps the decisions, the store and the bus; the transfer threads move the
/// bytes. Here with three threads, as on a machine with four CPUs.
@Suite struct TransferThreadsTests {
    /// Bytes a thread of a process wrote so far (/proc/PID/task/TID/io), by the thread's name.
    private func writtenByThread(_ pid: Int32) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let base = "/proc/\(pid)/task/\(tid)"
            let name = tid == String(pid) ? "loop" : try String(contentsOfFile: base + "/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let io = try String(contentsOfFile: base + "/io", encoding: .utf8)
            let wchar = io.split(separator: "\n").first { $0.hasPrefix("wchar:") }
            out[name, default: 0] += Int(wchar?.split(separator: " ").last ?? "0") ?? 0
        }
        return out
    }

    private func download(_ h: Harness, scheme: String, count: Int, size: Int) throws -> [Data] {
        var requests: [Value] = []
        var bodies: [Data] = []
        for i in 0..<count {
            bodies.append(try h.makeFile("t\(i).bin", size: size))
            requests.append(.tuple([.string("\(scheme)://127.0.0.1:\(h.nginxPort)/t\(i).bin"), .dict([:])]))
        }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Threads"), .dict(["keep-events": .bool(false)])])
        _ = try c.call("CreateDownloads", [.string("dev.ferry.test.Threads"), .array(requests, elementType: "(sa{sv})")])
        try h.eventually("\(count) files") {
            try FileManager.default.contentsOfDirectory(atPath: h.downloads).count == count
        }
        return bodies
    }

    /// The bodies are written by the transfer threads, not by the loop: the loop writes the
    /// store only, far less than the bodies.
    @Test func theBodiesAreWrittenByTransferThreadsNotTheLoop() throws {
        let h = try Harness()
        try h.startNginx()
        try h.startAgent(["--max-transfers", "16", "--max-per-host", "16"], environment: ["FERRY_TRANSFER_THREADS": "3"])
        let bodies = try download(h, scheme: "http", count: 60, size: 256 * 1024)
        for (i, body) in bodies.enumerated() {
            #expect(FileManager.default.contents(atPath: h.downloads + "/t\(i).bin") == body, "t\(i).bin")
        }
        let written = try writtenByThread(h.agent!.processIdentifier)
        let total = 60 * 256 * 1024
        let threads = written.keys.filter { $0.hasPrefix("ferry-curl-") }.sorted()
        #expect(threads == ["ferry-curl-0", "ferry-curl-1", "ferry-curl-2"])
        #expect(threads.reduce(0) { $0 + (written[$1] ?? 0) } >= total, "\(written)")
        #expect((written["loop"] ?? 0) < total / 4, "the loop wrote \(written["loop"] ?? 0) bytes: \(written)")
    }

    /// An https host's transfers share a thread, so HTTP/2 still carries them all on one
    /// connection (spread over three threads, they opened three).
    @Test func anHTTPSHostKeepsOneConnectionOverSeveralThreads() throws {
        let h = try Harness()
        let cert = try h.startNginx(tls: true, http2: true)
        try h.startAgent(
            ["--max-transfers", "16", "--max-per-host", "16", "--ca-file", cert],
            environment: ["FERRY_TRANSFER_THREADS": "3"])
        _ = try download(h, scheme: "https", count: 64, size: 16_384)
        let (served, connections) = try h.nginxConnections()
        #expect(served == 64)
        #expect(connections == 1, "\(connections) connections for 64 requests over HTTP/2")
    }
}
