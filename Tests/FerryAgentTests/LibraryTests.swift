import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

@Suite(.serialized) struct LibraryTests {
    func setUp() throws -> Harness {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        return h
    }

    func config(_ h: Harness, _ id: String = "dev.ferry.test.Lib") -> FerrySessionConfiguration {
        var c = FerrySessionConfiguration.background(withIdentifier: id)
        c.busAddress = h.busAddress
        c.defaultDestination = URL(fileURLWithPath: h.root + "/unclaimed")
        return c
    }

    @Test func downloadDeliversEveryCallbackOnTheDelegateQueue() throws {
        let h = try setUp()
        let body = try h.makeFile("a.bin", size: 300_000)
        let rec = Recorder()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        rec.queue = queue
        rec.moveInto = URL(fileURLWithPath: h.root + "/mine")
        let session = try FerrySession(configuration: config(h), delegate: rec, delegateQueue: queue)
        let task = try session.downloadTask(with: URL(string: h.faultURL("a.bin", "rate=1000000"))!, description: "first")
        #expect(task.state == .suspended)   // created suspended, as in NSURLSession
        task.resume()
        let calls = try rec.wait("completion and drain") { $0.last == .finishedEvents }
        let id = task.taskIdentifier
        #expect(calls.contains(.wrote(id, total: 300_000, expected: 300_000)))
        #expect(calls.contains { if case .finished(id, _) = $0 { return true }; return false })
        #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        // Order: the file is handed over before completion.
        let fin = calls.firstIndex { if case .finished = $0 { return true }; return false }!
        #expect(fin < calls.firstIndex(of: .completed(id, error: nil, hasResumeData: false))!)
        #expect(try Data(contentsOf: rec.moved[id]!) == body)
        #expect(rec.offQueue == 0)
        #expect(task.state == .completed && task.countOfBytesReceived == 300_000 && task.taskDescription == "first")
        session.disconnect()
    }

    /// FerryRequest.earliestBeginDate: after resume() the task waits (reason scheduled) until then.
    @Test func earliestBeginDateHoldsTheTaskUntilItsTime() throws {
        let h = try setUp()
        try h.makeFile("later.bin", size: 10_000)
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let begin = Date().addingTimeInterval(3)
        let request = FerryRequest(url: URL(string: h.faultURL("later.bin"))!, earliestBeginDate: begin, priority: 0.8)
        let task = try session.downloadTask(with: request)
        task.resume()
        try h.eventually("the task waiting for its time") {
            let info = try h.show(Int64(task.taskIdentifier))
            return info["state"] as? String == "waiting" && info["reason"] as? String == "scheduled"
        }
        #expect(try h.show(Int64(task.taskIdentifier))["priority"] as? Double == 0.8)
        let calls = try rec.wait("completion") { $0.completed(task.taskIdentifier) != nil }
        #expect(calls.completed(task.taskIdentifier) == .completed(task.taskIdentifier, error: nil, hasResumeData: false))
        #expect(Date() >= begin)
        session.disconnect()
    }

    @Test func anUnmovedFileGoesToTheDefaultDestination() throws {
        let h = try setUp()
        let body = try h.makeFile("report.pdf", size: 10_000)
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("report.pdf"))!)
        task.resume()
        let calls = try rec.wait("completion") { $0.completed(task.taskIdentifier) != nil }
        guard case .finished(_, let file)? = calls.first(where: { if case .finished = $0 { return true }; return false }) else {
            Issue.record("no finished callback"); return
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/unclaimed/report.pdf")) == body)
        session.disconnect()
    }

    @Test func eventsAsAnAsyncSequence() async throws {
        let h = try setUp()
        try h.makeFile("s.bin", size: 50_000)
        let session = try FerrySession(configuration: config(h))
        let task = try session.downloadTask(with: URL(string: h.faultURL("s.bin"))!)
        task.resume()
        var kinds: [String] = []
        var movedTo: URL?
        for await event in session.events {
            switch event {
            case .didWriteData: if kinds.last != "write" { kinds.append("write") }
            case .didFinishDownloading(_, let location):
                kinds.append("finish")
                movedTo = try FerryFiles.move(location, into: URL(fileURLWithPath: h.root + "/async"))
            case .didComplete(let t, let error):
                kinds.append(error == nil && t === task ? "complete" : "error")
            case .didFinishEventsForBackgroundSession: kinds.append("drained")
            default: kinds.append("other")
            }
            if kinds.last == "drained" { break }
        }
        #expect(kinds == ["write", "finish", "complete", "drained"])
        #expect(FileManager.default.fileExists(atPath: movedTo?.path ?? "/nonexistent"))
        session.disconnect()
    }

    @Test func reconnectReplaysPendingEventsExactlyOnce() throws {
        let h = try setUp()
        try h.makeFile("r.bin", size: 100_000)
        let c = config(h, "dev.ferry.test.Replay")
        let first = Recorder()
        var session = try FerrySession(configuration: c, delegate: first)
        let task = try session.downloadTask(with: URL(string: h.faultURL("r.bin", "hold=20000"))!)
        let id = task.taskIdentifier
        task.resume()
        try first.wait("first bytes") { $0.contains { if case .wrote(id, _, _) = $0 { return true }; return false } }
        session.disconnect()   // the app exits mid-download
        try h.releaseHolds()
        try h.eventually("the agent finishing alone") { (try h.show(Int64(id))["state"] as? String) == "completed" }

        // The app comes back: the finished file and the completion wait for it.
        let second = Recorder()
        second.dieInFinish = true   // … and dies inside didFinishDownloadingTo: nothing is acknowledged
        session = try FerrySession(configuration: c, delegate: second)
        try second.wait("finish before dying") { $0.contains { if case .finished(id, _) = $0 { return true }; return false } }

        let third = Recorder()
        third.moveInto = URL(fileURLWithPath: h.root + "/third")
        session = try FerrySession(configuration: c, delegate: third)
        let calls = try third.wait("replay") { $0.last == .finishedEvents }
        #expect(calls.count { if case .finished(id, _) = $0 { return true }; return false } == 1)
        #expect(calls.count { if case .completed(id, _, _) = $0 { return true }; return false } == 1)
        #expect(third.moved[id] != nil)
        session.disconnect()

        // Everything was acknowledged: a fourth connection gets nothing.
        let info = try h.client().call("GetSession", [.string(c.identifier)]).first?.dictValue ?? [:]
        #expect(info["pending-events"] == .uint32(0))
    }

    @Test func resumeDataRoundTripFetchesOnlyMissingBytes() throws {
        let h = try setUp()
        let body = try h.makeFile("big.bin", size: 400_000)
        let rec = Recorder()
        rec.moveInto = URL(fileURLWithPath: h.root + "/mine")
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("big.bin", "hold=150000"))!)
        task.resume()
        try h.eventually("the hold") { (try h.show(Int64(task.taskIdentifier))["received"] as? Int) == 150_000 }
        let sem = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var blob: Data?
        task.cancel(byProducingResumeData: { blob = $0; sem.signal() })
        sem.wait()
        let data = try #require(blob)
        try rec.wait("canceled") { $0.completed(task.taskIdentifier) == .completed(task.taskIdentifier, error: "Canceled", hasResumeData: true) }
        #expect(rec.resumeData[task.taskIdentifier] != nil)
        try h.releaseHolds()

        let again = try session.downloadTask(withResumeData: data)
        again.resume()
        let calls = try rec.wait("resumed download") { $0.completed(again.taskIdentifier) != nil }
        #expect(calls.contains(.resumed(again.taskIdentifier, offset: 150_000)))
        #expect(calls.completed(again.taskIdentifier) == .completed(again.taskIdentifier, error: nil, hasResumeData: false))
        #expect(try Data(contentsOf: rec.moved[again.taskIdentifier]!) == body)
        let log = try h.serverLog().filter { $0.path == "/big.bin" }
        #expect(log.count == 2 && log[1].rangeStart == 150_000)
        #expect(log.count == 2 && log[1].sent == 400_000 - 150_000)   // only the missing bytes
        session.disconnect()
    }

    @Test func invalidResumeDataIsRefusedClearly() throws {
        let h = try setUp()
        let session = try FerrySession(configuration: config(h), delegate: Recorder())
        for garbage in [Data("not resume data".utf8), Data(#"{"format":"com.apple.resume","version":9}"#.utf8), Data()] {
            #expect(throws: FerryError.self) { try session.downloadTask(withResumeData: garbage) }
            do { _ = try session.downloadTask(withResumeData: garbage) } catch let e as FerryError {
                #expect(e.kind == .invalidResumeData)
            }
        }
        #expect(try session.allTasks().isEmpty)
        // One live object per identifier in a process: a second would show every event twice.
        #expect(throws: FerryError.self) { try FerrySession(configuration: config(h), delegate: Recorder()) }
        session.disconnect()
        let again = try FerrySession(configuration: config(h), delegate: Recorder())
        again.disconnect()
    }

    @Test func basicAuthThroughDidReceiveChallenge() throws {
        let h = try setUp()
        let body = try h.makeFile("secret.bin", size: 20_000)
        let rec = Recorder()
        rec.moveInto = URL(fileURLWithPath: h.root + "/mine")
        rec.answers = [.useCredential(user: "ann", password: "wrong"), .useCredential(user: "ann", password: "s3cret")]
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("secret.bin", "auth=ann:s3cret"))!)
        task.resume()
        let id = task.taskIdentifier
        let calls = try rec.wait("authenticated download") { $0.completed(id) != nil }
        #expect(calls.filter { if case .challenge = $0 { return true }; return false } ==
                [.challenge(id, realm: "ferry-test", failures: 0), .challenge(id, realm: "ferry-test", failures: 1)])
        #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        #expect(try Data(contentsOf: rec.moved[id]!) == body)
        #expect(!h.agentLog.contains("s3cret"))

        // Cancel as the answer.
        rec.answers = [.cancelAuthenticationChallenge]
        let other = try session.downloadTask(with: URL(string: h.faultURL("secret.bin", "auth=bob:x"))!)
        other.resume()
        try rec.wait("canceled by the app") { $0.completed(other.taskIdentifier) == .completed(other.taskIdentifier, error: "Canceled", hasResumeData: false) }
        session.disconnect()
    }

    @Test func uploadReportsSentBytes() throws {
        let h = try setUp()
        let payload = try h.makeFile("payload.bin", size: 200_000)
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h), delegate: rec)
        let task = try session.uploadTask(with: FerryRequest(url: URL(string: h.faultURL("upload/p.bin"))!),
                                          fromFile: URL(fileURLWithPath: h.www + "/payload.bin"))
        task.resume()
        let id = task.taskIdentifier
        let calls = try rec.wait("upload done") { $0.completed(id) != nil }
        #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        #expect(calls.contains(.sent(id, total: 200_000, expected: 200_000)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/p.bin")) == payload)
        #expect(task.countOfBytesSent == 200_000)
        // A file that is not there is refused at once.
        #expect(throws: FerryError.self) {
            try session.uploadTask(with: FerryRequest(url: URL(string: h.faultURL("upload/x"))!),
                                   fromFile: URL(fileURLWithPath: h.root + "/missing"))
        }
        session.disconnect()
    }

    @Test func anUploadHandedOverAsADescriptorIsTheAgentsCopyUntilItEnds() throws {
        let h = try setUp()
        var c = config(h)
        c.uploadsByDescriptor = true   // what a sandboxed app does by default
        let original = h.root + "/home/draft.bin"
        try Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: original))
        let payload = try Data(contentsOf: URL(fileURLWithPath: original))
        let rec = Recorder()
        let session = try FerrySession(configuration: c, delegate: rec)
        let task = try session.uploadTask(with: FerryRequest(url: URL(string: h.faultURL("upload/d.bin"))!),
                                          fromFile: URL(fileURLWithPath: original))
        // The agent holds its own synced copy: the app's file may go at once.
        let copy = try #require(try AgentProxy(h.client()).getTask(task: Int64(task.taskIdentifier)).uploadFile)
        #expect(copy.hasPrefix(StateFolder(h.state).uploads) && copy != original, "\(copy)")
        var st = stat()
        #expect(stat(copy, &st) == 0 && st.st_mode & 0o777 == 0o600 && st.st_size == 150_000)
        try FileManager.default.removeItem(atPath: original)
        task.resume()
        let id = task.taskIdentifier
        let calls = try rec.wait("upload done") { $0.completed(id) != nil }
        #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/d.bin")) == payload)
        try h.eventually("the copy to go") { !FileManager.default.fileExists(atPath: copy) }
        session.disconnect()
    }

    @Test func invalidateAndCancelEndsTheSession() throws {
        let h = try setUp()
        try h.makeFile("slow.bin", size: 100_000)
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h, "dev.ferry.test.Invalid"), delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("slow.bin", "hold=1000"))!)
        task.resume()
        session.invalidateAndCancel()
        let calls = try rec.wait("invalidation") { $0.contains(.invalid) }
        #expect(calls.completed(task.taskIdentifier) == .completed(task.taskIdentifier, error: "Canceled", hasResumeData: false))
        #expect(calls.firstIndex(of: .invalid)! > calls.firstIndex { if case .completed = $0 { return true }; return false }!)
        // The identifier is free again: a new session works.
        let fresh = Recorder()
        let again = try FerrySession(configuration: config(h, "dev.ferry.test.Invalid"), delegate: fresh)
        try h.makeFile("ok.bin", size: 1000)
        let t = try again.downloadTask(with: URL(string: h.faultURL("ok.bin"))!)
        t.resume()
        try fresh.wait("new life") { $0.completed(t.taskIdentifier) != nil }
        again.finishTasksAndInvalidate()
        try fresh.wait("finish and invalidate") { $0.contains(.invalid) }
        #expect(throws: FerryError.self) { try again.downloadTask(with: URL(string: h.faultURL("ok.bin"))!) }
    }

    @Test func perHostLimitOfTheSessionIsEnforced() throws {
        let h = try Harness()
        try h.startAgent(["--stall-timeout", "60"])   // the held first task must not time out meanwhile
        try h.startFaultServer()
        try h.makeFile("one.bin", size: 100_000)
        try h.makeFile("two.bin", size: 100_000)
        var c = config(h, "dev.ferry.test.OnePerHost")
        c.httpMaximumConnectionsPerHost = 1
        let rec = Recorder()
        let session = try FerrySession(configuration: c, delegate: rec)
        let first = try session.downloadTask(with: URL(string: h.faultURL("one.bin", "hold=10000"))!)
        let second = try session.downloadTask(with: URL(string: h.faultURL("two.bin"))!)
        first.resume()
        try h.eventually("the first held") { (try h.show(Int64(first.taskIdentifier))["received"] as? Int) == 10_000 }
        second.resume()
        // The agent allows two per host, the session one: the second waits in the queue.
        try h.eventually("the second queued") { (try h.show(Int64(second.taskIdentifier))["state"] as? String) == "queued" }
        #expect((try h.show(Int64(first.taskIdentifier))["state"] as? String) == "running")
        #expect(try h.serverLog().allSatisfy { $0.path != "/two.bin" })
        try h.releaseHolds()
        try rec.wait("both") { $0.completed(first.taskIdentifier) != nil && $0.completed(second.taskIdentifier) != nil }
        session.disconnect()
    }
}
