import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The library across an agent crash, files handed over once, and late cancels and suspends.
extension LibraryTests {
    @Test func aSessionCarriesOnAcrossAnAgentCrash() throws {
        let h = try setUp()
        let body = try h.makeFile("long.bin", size: 300_000)
        let rec = Recorder()
        rec.moveInto = URL(fileURLWithPath: h.root + "/mine")
        let c = config(h, "dev.ferry.test.Crash")
        let session = try FerrySession(configuration: c, delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("long.bin", "hold=100000"))!)
        task.resume()
        try h.eventually("the hold") { (try h.show(Int64(task.taskIdentifier))["received"] as? Int) == 100_000 }
        h.killAgent()
        try h.releaseHolds()
        try h.startAgent()
        // The same session object gets the rest: the new agent resumed the task and the library
        // reopened the session when the agent's name got its new owner.
        let calls = try rec.wait("completion from the new agent") { $0.completed(task.taskIdentifier) != nil }
        #expect(calls.completed(task.taskIdentifier) == .completed(task.taskIdentifier, error: nil, hasResumeData: false))
        #expect(try Data(contentsOf: rec.moved[task.taskIdentifier]!) == body)
        let info = try h.client().call("GetSession", [.string(c.identifier)]).first?.dictValue ?? [:]
        #expect(info["clients"] == .uint32(1))   // it knows the app is there again
        session.disconnect()
    }

    @Test func aFileMovedBeforeACrashIsNotHandedOverAgain() throws {
        let h = try setUp()
        try h.makeFile("m.bin", size: 5_000)
        let c = config(h, "dev.ferry.test.MovedThenDied")
        let first = Recorder()
        first.moveInto = URL(fileURLWithPath: h.root + "/mine")
        first.dieInFinish = true   // moves the file, then dies before the acknowledgement
        var session = try FerrySession(configuration: c, delegate: first)
        let task = try session.downloadTask(with: URL(string: h.faultURL("m.bin"))!)
        let id = task.taskIdentifier
        task.resume()
        try first.wait("the move") { $0.contains { if case .finished(id, _) = $0 { return true }; return false } }
        #expect(first.moved[id] != nil)
        let second = Recorder()
        session = try FerrySession(configuration: c, delegate: second)
        let calls = try second.wait("the rest") { $0.completed(id) != nil }
        #expect(!calls.contains { if case .finished = $0 { return true }; return false })
        #expect(FileManager.default.fileExists(atPath: first.moved[id]!.path))
        session.disconnect()
    }

    @Test func challengesThroughTheAsyncSequence() async throws {
        let h = try setUp()
        let body = try h.makeFile("locked.bin", size: 30_000)
        let session = try FerrySession(configuration: config(h, "dev.ferry.test.AsyncAuth"))
        let task = try session.downloadTask(with: URL(string: h.faultURL("locked.bin", "auth=kim:pw"))!)
        task.resume()
        var realm = ""
        var saved: Data?
        loop: for await event in session.events {
            switch event {
            case .didReceiveChallenge(_, let challenge, let respond):
                realm = challenge.realm
                respond(.useCredential(user: "kim", password: "pw"))
            case .didFinishDownloading(_, let location):
                saved = try Data(contentsOf: location)
            case .didComplete(_, let error):
                #expect(error == nil)
                break loop
            default: break
            }
        }
        #expect(realm == "ferry-test")
        #expect(saved == body)
        session.disconnect()
    }

    @Test func cancelingATaskThatAlreadyEndedLeavesItCompleted() throws {
        let h = try setUp()
        try h.makeFile("quick.bin", size: 1_000)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true   // the app is busy: no callback runs yet
        let rec = Recorder()
        let session = try FerrySession(configuration: config(h, "dev.ferry.test.LateCancel"), delegate: rec, delegateQueue: queue)
        let task = try session.downloadTask(with: URL(string: h.faultURL("quick.bin"))!)
        task.resume()
        try h.eventually("done at the agent") { (try h.show(Int64(task.taskIdentifier))["state"] as? String) == "completed" }
        #expect(task.state == .running)   // the object has not heard yet
        task.cancel()
        #expect(task.state == .completed)   // the agent refused: its state wins, not "canceling"
        queue.isSuspended = false
        let calls = try rec.wait("the events") { $0.completed(task.taskIdentifier) != nil }
        #expect(calls.completed(task.taskIdentifier) == .completed(task.taskIdentifier, error: nil, hasResumeData: false))
        session.disconnect()
    }

    @Test func suspendAndResumeContinueFromTheOffset() throws {
        let h = try setUp()
        let body = try h.makeFile("pause.bin", size: 200_000)
        let rec = Recorder()
        rec.moveInto = URL(fileURLWithPath: h.root + "/mine")
        let session = try FerrySession(configuration: config(h, "dev.ferry.test.Suspend"), delegate: rec)
        let task = try session.downloadTask(with: URL(string: h.faultURL("pause.bin", "hold=80000"))!)
        task.resume()
        try h.eventually("the hold") { (try h.show(Int64(task.taskIdentifier))["received"] as? Int) == 80_000 }
        task.suspend()
        #expect(task.state == .suspended)
        #expect((try h.show(Int64(task.taskIdentifier))["state"] as? String) == "paused")
        try h.releaseHolds()
        task.resume()
        let calls = try rec.wait("completion") { $0.completed(task.taskIdentifier) != nil }
        #expect(calls.contains(.resumed(task.taskIdentifier, offset: 80_000)))
        #expect(try Data(contentsOf: rec.moved[task.taskIdentifier]!) == body)
        #expect(task.state == .completed)
        session.disconnect()
    }
}
