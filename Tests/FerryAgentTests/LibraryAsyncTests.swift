import Ferry
import FerryBus
import FerryCore
import Foundation
import Synchronization
import Testing

/// The library's async/await calls against the real agent and loopback servers.
/// The limits are generous on purpose: on two CPUs the other suites' blocking waits can hold the
/// concurrency pool's threads for minutes (a 60 s limit once fired on a healthy download); they
/// are there to end a real hang, not to time anything.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LibraryAsyncTests {
    let library = LibraryTests()

    /// The agent waits out a held response (the harness's 3 s stall timeout would fetch the rest
    /// with a Range request, and a loaded machine could finish the file before the test acts).
    func heldSetUp() throws -> Harness {
        let h = try Harness()
        try h.startAgent(["--stall-timeout", "120"])
        try h.startFaultServer()
        return h
    }

    /// A session of its own for each test (suites run side by side in this process).
    func config(_ h: Harness) -> FerrySessionConfiguration {
        library.config(h, "dev.ferry.test.Async." + UUID().uuidString)
    }

    /// What a progress closure saw, readable from the test.
    final class Seen: Sendable {
        let progress = Mutex<[FerryProgress]>([])
        func add(_ p: FerryProgress) { progress.withLock { $0.append(p) } }
        var last: FerryProgress? { progress.withLock { $0.last } }
    }

    @Test func downloadReturnsTheMovedFileAndLeavesTheDelegateAlone() async throws {
        let h = try library.setUp()
        let body = try h.makeFile("a.bin", size: 300_000)
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let seen = Seen()
        let mine = URL(fileURLWithPath: h.root + "/mine")
        let (file, response) = try await session.download(
            from: URL(string: h.faultURL("a.bin", "rate=1000000"))!, into: mine, progress: { seen.add($0) })
        #expect(file.path == mine.path + "/a.bin")
        #expect(try Data(contentsOf: file) == body)
        #expect(response.suggestedFilename == "a.bin" && response.expectedContentLength == 300_000)
        #expect(seen.last == FerryProgress(completed: 300_000, total: 300_000))
        // Its events were the call's: the delegate saw none, not even a drain of them.
        #expect(rec.calls.isEmpty, "\(rec.calls)")
        session.disconnect()
    }

    /// Without a delegate or a reader of `events`, one awaited download after another: the
    /// first's events must not wait in `events` for a reader that never comes.
    @Test func awaitedDownloadsNeedNoEventReader() async throws {
        let h = try library.setUp()
        try h.makeFile("one.bin", size: 20_000)
        try h.makeFile("two.bin", size: 30_000)
        let session = try FerrySession(configuration: config(h))
        let into = URL(fileURLWithPath: h.root + "/mine")
        let (one, _) = try await within(300) { try await session.download(from: URL(string: h.faultURL("one.bin"))!, into: into) }
        let (two, _) = try await within(300) { try await session.download(from: URL(string: h.faultURL("two.bin"))!, into: into) }
        #expect(try Data(contentsOf: one).count == 20_000 && Data(contentsOf: two).count == 30_000)
        #expect(try await session.tasks.isEmpty)
        session.disconnect()
    }

    @Test func aFailedDownloadThrowsItsNamedError() async throws {
        let h = try library.setUp()
        let session = try FerrySession(configuration: config(h))
        let error = await #expect(throws: FerryTaskError.self) {
            try await session.download(from: URL(string: h.faultURL("missing.bin"))!)
        }
        #expect(error?.name == "NotFound", "\(String(describing: error))")
        session.disconnect()
    }

    /// Canceling the Swift task cancels the transfer in the agent, as URLSession does.
    @Test func cancelingTheSwiftTaskCancelsTheTransfer() async throws {
        let h = try heldSetUp()
        try h.makeFile("held.bin", size: 300_000)
        let session = try FerrySession(configuration: config(h))
        let seen = Seen()
        let job = Task {
            try await session.download(from: URL(string: h.faultURL("held.bin", "hold=100000"))!, progress: { seen.add($0) })
        }
        try h.eventually("the first bytes", timeout: 300) { seen.last != nil }
        #expect(try await session.tasks.count == 1)
        job.cancel()
        let error = await #expect(throws: FerryTaskError.self) { try await within(300) { try await job.value } }
        #expect(error?.isCancellation == true)
        #expect(try await session.tasks.isEmpty)
        try h.releaseHolds()
        session.disconnect()
    }

    @Test func uploadReturnsTheServersReply() async throws {
        let h = try library.setUp()
        let payload = try h.makeFile("payload.bin", size: 200_000)
        let session = try FerrySession(configuration: config(h))
        let seen = Seen()
        let reply = try await session.upload(
            for: FerryRequest(url: URL(string: h.faultURL("upload/p.bin"))!),
            fromFile: URL(fileURLWithPath: h.www + "/payload.bin"), progress: { seen.add($0) })
        #expect((200..<300).contains(reply.statusCode), "\(reply)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/p.bin")) == payload)
        #expect(seen.last?.completed == 200_000)
        session.disconnect()
    }

    /// An app that disconnects while it waits: the call ends with a clear error, the transfer goes on.
    @Test func disconnectingEndsTheWaitNotTheTransfer() async throws {
        let h = try heldSetUp()
        try h.makeFile("held.bin", size: 300_000)
        let session = try FerrySession(configuration: config(h))
        let seen = Seen()
        let job = Task { try await session.download(from: URL(string: h.faultURL("held.bin", "hold=100000"))!, progress: { seen.add($0) }) }
        try h.eventually("the first bytes", timeout: 300) { seen.last != nil }
        session.disconnect()
        let error = await #expect(throws: FerryError.self) { try await within(300) { try await job.value } }
        #expect(error?.message.contains("go on in the agent") == true)
        let listed = try h.ferry("list", "--json").stdout
        #expect(listed.contains("held.bin") && !listed.contains("canceled"), "\(listed)")
        try h.releaseHolds()
    }

    struct TimedOut: Error {}

    /// Resumes a continuation once, whoever comes first.
    final class Once<T: Sendable>: Sendable {
        let continuation: Mutex<CheckedContinuation<T, Error>?>
        init(_ c: CheckedContinuation<T, Error>) { continuation = Mutex(c) }
        func resume(_ r: Result<T, Error>) { continuation.withLock { c in c?.resume(with: r); c = nil } }
    }

    /// `body`'s result, or TimedOut after `seconds` (a wait that never ends is left behind).
    func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            let once = Once(c)
            Task {
                do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { once.resume(.failure(TimedOut())) }
        }
    }
}
