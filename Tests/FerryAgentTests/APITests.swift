import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The D-Bus API of the real agent: control, events, and bad input.
@Suite(.serialized) struct APITests {
    func open(_ c: BusClient, _ session: String) throws {
        _ = try c.call("OpenSession", [.string(session), .dict([:])])
    }
    func create(_ c: BusClient, _ session: String, _ url: String, _ options: [String: Value] = [:]) throws -> Int64 {
        try #require(try c.call("CreateDownload", [.string(session), .string(url), .dict(options)]).first?.int64Value)
    }
    func state(_ h: Harness, _ id: Int64) throws -> String { try h.show(id)["state"] as? String ?? "" }

    /// Replies and signals leave the agent from its outbox thread in the order the loop made
    /// them: a CreateDownloads reply comes after the TaskChanged of every task it created.
    @Test func aReplyFollowsTheSignalsOfItsTurn() throws {
        let h = try Harness()
        try h.startAgent()
        let r = try h.run("/usr/bin/python3", [Harness.packageRoot + "/Tests/Support/reply-order.py", "1000"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n") == ["before-reply 1000", "total 1000"], "\(r.stdout)")
    }

    /// At rest the agent's loop sleeps: within a while after a call, its thread spends a second
    /// without waking once (its context switches, counted by the kernel, stay the same). A bus
    /// source that set its poll events at every iteration once woke the loop thousands of times
    /// a second.
    @Test func theLoopSleepsAtRest() throws {
        let h = try Harness()
        try h.startAgent()
        _ = try h.client().call("GetStatus", [])
        let pid = try #require(h.agent?.processIdentifier)
        func switches() throws -> [Substring] {
            // The process's first thread is the loop's.
            try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8)
                .split(separator: "\n").filter { $0.contains("ctxt_switches") }
        }
        var first: [Substring] = [], second: [Substring] = []
        try h.eventually("a second without a wake-up of the loop", timeout: 20) {
            first = try switches()
            usleep(1_000_000)   // the window measured, not a wait for something
            second = try switches()
            return first == second
        }
        #expect(first.count == 2, "\(first)")
    }

    /// The session methods refuse bad input with an error naming the problem; nothing else breaks.
    @Test func sessionMethodsRefuseBadInput() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        let c = try h.client()
        try open(c, "app")
        func expect(_ kind: FerryError.Kind, _ method: String, _ args: [Value], contains: String) {
            do {
                _ = try c.call(method, args)
                Issue.record("\(method) accepted \(args)")
            } catch let e as FerryError {
                #expect(e.kind == kind && e.message.contains(contains), "\(method): \(e)")
            } catch { Issue.record("\(error)") }
        }
        expect(.noSuchSession, "GetSession", [.string("nope")], contains: "nope")
        expect(.noSuchSession, "FinishedHandlingEvents", [.string("nope")], contains: "nope")
        expect(.noSuchSession, "InvalidateSession", [.string("nope"), .bool(true)], contains: "nope")
        expect(.invalidArgument, "CreateUpload", [.string("app"), .string(h.faultURL("upload/x")), .string("relative.txt"), .dict([:])],
               contains: "absolute path")
        expect(.invalidArgument, "CreateUpload", [.string("app"), .string(h.faultURL("upload/x")), .string(h.root), .dict([:])],
               contains: "not a readable regular file")
        expect(.invalidArgument, "CreateUpload", [.string("app"), .string(h.faultURL("upload/x")), .string(h.root + "/bus.conf"),
                                                  .dict(["method": .string("DELETE")])], contains: "PUT or POST")
        expect(.unsupportedScheme, "CreateUpload", [.string("app"), .string("ftp://h/x"), .string(h.root + "/bus.conf"), .dict([:])],
               contains: "ftp")
        expect(.invalidArgument, "CreateDownload", [.string("app"), .string(h.faultURL("a")), .dict(["method": .string("DELETE")])],
               contains: "GET or POST")
        expect(.invalidArgument, "OpenSession", [.string("app2"), .dict(["launch-command": .string("/bin/sh")])],
               contains: "array of strings")
        // A challenge answer for a task that is not waiting for one, and malformed answers.
        let id = try create(c, "app", h.faultURL("missing"))
        expect(.invalidArgument, "AnswerChallenge", [.uint64(UInt64(id)), .dict(["user": .string("u")])], contains: "user and password")
        expect(.invalidArgument, "AnswerChallenge", [.uint64(UInt64(id)), .dict(["action": .string("maybe")])], contains: "reject or cancel")
        expect(.invalidArgument, "AnswerChallenge", [.uint64(UInt64(id)), .dict(["token": .string("x")])], contains: "token")
        try h.eventually("the 404") { try state(h, id) == "failed" }
        expect(.invalidState, "AnswerChallenge", [.uint64(UInt64(id)), .dict(["user": .string("u"), "password": .string("p")])],
               contains: "not waiting for credentials")
        expect(.noSuchTask, "AnswerChallenge", [.uint64(999), .dict(["action": .string("cancel")])], contains: "999")
        // An invalidated session takes no new tasks until it is opened again.
        _ = try c.call("InvalidateSession", [.string("app"), .bool(false)])
        expect(.invalidState, "CreateDownload", [.string("app"), .string(h.faultURL("a")), .dict([:])], contains: "invalidated")
        try open(c, "app")
        #expect(try create(c, "app", h.faultURL("a")) > 0)
        #expect(try c.call("GetStatus").first?.dictValue?["version"] != nil)   // still serving
    }

    @Test func pauseResumeAndCancel() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("p.bin", size: 1_000_000)
        let c = try h.client()
        try open(c, "app")
        let id = try create(c, "app", h.faultURL("p.bin", "hold=300000"))
        try h.eventually("300000 bytes") { (try h.show(id)["received"] as? Int) == 300_000 }
        #expect(try h.ferry("pause", String(id)).status == 0)
        #expect(try state(h, id) == "paused")
        try h.releaseHolds()
        #expect(try h.ferry("resume", String(id)).status == 0)
        try h.eventually("completed") { try state(h, id) == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/p.bin")) == data)
        let log = try h.serverLog()
        #expect(log.last?.rangeStart == 300_000, "resume fetched only the rest")
        let events = try (try c.call("FetchEvents", [.string("app"), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
            .compactMap { try FetchedEvent(bus: $0)?.queued }.map(\.event)
        #expect(events.contains(.resumed(offset: 300_000, expected: 1_000_000)))
        #expect(events.contains { if case .progress = $0 { return true }; return false })

        // Cancel: no file, no staging bytes, final state.
        let other = try create(c, "app", h.faultURL("p.bin", "hold=100000&x=1"))
        try h.eventually("100000 bytes") { (try h.show(other)["received"] as? Int) == 100_000 }
        #expect(try h.ferry("cancel", String(other)).status == 0)
        #expect(try state(h, other) == "canceled")
        #expect(!FileManager.default.fileExists(atPath: StateFolder(h.state).staged(other)))
        let again = try h.ferry("resume", String(other))
        #expect(again.status == 2 && again.stderr.contains("canceled"), "a refused request: \(again.status)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads) == ["p.bin"])
    }

    @Test func eventsAreReplayedUntilAcknowledged() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("ev.bin", size: 50_000)
        let c = try h.client()
        try open(c, "com.example.App")
        let id = try create(c, "com.example.App", h.faultURL("ev.bin"))
        try h.eventually("completed") { try state(h, id) == "completed" }
        func fetch(_ client: BusClient, after: UInt64 = 0) throws -> [QueuedEvent] {
            try (try client.call("FetchEvents", [.string("com.example.App"), .uint64(after), .uint32(0)]).first?.arrayValue ?? [])
                .compactMap { try FetchedEvent(bus: $0)?.queued }
        }
        let first = try fetch(c)
        let kinds = first.map(\.event.kind)
        #expect(kinds.suffix(2) == ["finished", "completed"])
        #expect(first.map(\.seq) == first.map(\.seq).sorted())
        guard case .finished(let file, 50_000) = first.first(where: { $0.event.kind == "finished" })?.event else {
            Issue.record("no finished event"); return
        }
        #expect(file == h.downloads + "/ev.bin")

        // A new connection (the app relaunched) sees the same events…
        let reconnected = try h.client()
        try open(reconnected, "com.example.App")
        #expect(try fetch(reconnected).map(\.seq) == first.map(\.seq))
        // …and after an agent restart too (durable events are stored).
        h.killAgent(signal: SIGKILL)
        try h.startAgent()
        let afterRestart = try fetch(try h.client())
        #expect(afterRestart.filter { $0.event.isDurable }.map(\.seq) == first.filter { $0.event.isDurable }.map(\.seq))
        // Acknowledged events are gone for good.
        let c2 = try h.client()
        _ = try c2.call("AcknowledgeEvents", [.string("com.example.App"), .uint64(first.last!.seq)])
        #expect(try fetch(c2).isEmpty)
        // New events continue above everything a client has seen.
        let next = try create(c2, "com.example.App", h.faultURL("ev.bin", "again=1"))
        try h.eventually("completed") { try state(h, next) == "completed" }
        #expect(try fetch(c2).allSatisfy { $0.seq > first.last!.seq })
    }

    @Test func resumeDataRoundTrip() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("rd.bin", size: 800_000)
        let c = try h.client()
        try open(c, "app")
        let id = try create(c, "app", h.faultURL("rd.bin", "hold=250000"))
        try h.eventually("250000 bytes") { (try h.show(id)["received"] as? Int) == 250_000 }
        let blob = try #require(try c.call("CancelProducingResumeData", [.uint64(UInt64(id))]).first?.bytesValue)
        #expect(try ResumeData.decode(blob).received == 250_000)
        try h.releaseHolds()
        let resumed = try #require(try c.call("CreateDownloadFromResumeData", [.string("app"), .bytes(blob), .dict([:])]).first?.int64Value)
        try h.eventually("completed") { try state(h, resumed) == "completed" }
        let file = try #require(try h.show(resumed)["file"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == data)
        #expect(try h.serverLog().last?.rangeStart == 250_000)
        // Garbage resume data gets a named error.
        do {
            _ = try c.call("CreateDownloadFromResumeData", [.string("app"), .bytes(Array("junk".utf8)), .dict([:])])
            Issue.record("garbage accepted")
        } catch let e as FerryError { #expect(e.kind == .invalidResumeData) }
    }

    @Test func badInputGetsClearErrorsAndTheAgentKeepsRunning() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let c = try h.client()
        try open(c, "app")
        func expectError(_ kind: FerryError.Kind, _ url: String, _ options: [String: Value] = [:], contains: String) {
            do {
                _ = try c.call("CreateDownload", [.string("app"), .string(url), .dict(options)])
                Issue.record("\(url) accepted")
            } catch let e as FerryError {
                #expect(e.kind == kind, "\(e)")
                #expect(e.message.contains(contains), "\(e.message)")
            } catch { Issue.record("\(error)") }
        }
        expectError(.invalidURL, "not-a-url", contains: "not a valid URL")
        expectError(.invalidURL, "http://exa mple.com/", contains: "spaces")
        expectError(.unsupportedScheme, "file:///etc/passwd", contains: "'file'")
        expectError(.unsupportedScheme, "ftp://example.com/x", contains: "'ftp'")
        expectError(.invalidDestination, h.faultURL("x"), ["directory": .string("/nonexistent/dir")], contains: "/nonexistent/dir")
        expectError(.invalidArgument, h.faultURL("x"), ["sha256": .string("xyz")], contains: "sha256")
        expectError(.invalidArgument, h.faultURL("x"), ["bogus": .bool(true)], contains: "bogus")
        do { _ = try c.call("GetTask", [.uint64(999)]); Issue.record("no error") }
        catch let e as FerryError { #expect(e.kind == .noSuchTask) }
        do { _ = try c.call("CreateDownload", [.string("never-opened"), .string(h.faultURL("x")), .dict([:])]); Issue.record("no error") }
        catch let e as FerryError { #expect(e.kind == .noSuchSession) }

        // Malformed calls: wrong argument types, missing arguments, unknown methods.
        for (method, args) in [("CreateDownload", [Value.uint32(1)]), ("GetTask", [.string("one")]),
                               ("ListTasks", []), ("NoSuchMethod", [])] as [(String, [Value])] {
            do { _ = try c.call(method, args); Issue.record("\(method) accepted") }
            catch let e as FerryError { #expect(e.message.contains("InvalidArgs") || e.message.contains("UnknownMethod") || e.message.contains("No such method"), "\(e.message)") }
        }
        // The CLI reports the problem and a non-zero status.
        let r = try h.ferry("download", "gopher://example.com/")
        #expect(r.status != 0 && r.stderr.contains("unsupported scheme"))
        // Still alive and answering.
        #expect(h.agent?.isRunning == true)
        #expect(try c.call("GetStatus").first?.dictValue?["version"] != nil)
    }

    @Test func batchCreationIsAllOrNothingAndListingIsPaged() throws {
        let h = try Harness()
        try h.startAgent()
        let c = try h.client()
        try open(c, "bulk")
        let n = 2_500
        let requests: [Value] = (0..<n).map { .tuple([.string("http://127.0.0.1:9/f\($0)"), .dict(["paused": .bool(true)])]) }
        let ids = try #require(try c.call("CreateDownloads", [.string("bulk"), .array(requests, elementType: "(sa{sv})")]).first?.arrayValue)
        #expect(ids.count == n)
        var seen: [Int64] = []
        var after: UInt64 = 0
        while true {
            let page = try #require(try c.call("ListTasks", [.string("bulk"), .uint64(after), .uint32(1000)]).first?.arrayValue)
            let pageIDs = page.compactMap { $0.dictValue?["id"]?.int64Value }
            #expect(page.allSatisfy { $0.dictValue?["state"]?.stringValue == "paused" })
            seen += pageIDs
            guard pageIDs.count == 1000, let last = pageIDs.last else { break }
            after = UInt64(last)
        }
        #expect(seen == ids.compactMap(\.int64Value))
        // One bad request rejects the whole batch, naming it.
        let bad: [Value] = [.tuple([.string("http://127.0.0.1:9/ok"), .dict([:])]), .tuple([.string("ftp://x/y"), .dict([:])])]
        do {
            _ = try c.call("CreateDownloads", [.string("bulk"), .array(bad, elementType: "(sa{sv})")])
            Issue.record("bad batch accepted")
        } catch let e as FerryError {
            #expect(e.kind == .unsupportedScheme && e.message.hasPrefix("request 2:"), "\(e)")
        }
        let status = try #require(try c.call("GetStatus").first?.dictValue?["tasks"]?.dictValue)
        #expect(status["paused"]?.int64Value == Int64(n))
        // The counts are kept as tasks change (not counted per call): they follow state changes
        // and survive a restart.
        let some = ids.prefix(3).compactMap(\.uint64Value)
        _ = try c.call("Cancel", [.uint64(some[0])])
        _ = try c.call("Cancel", [.uint64(some[1])])
        _ = try c.call("Resume", [.uint64(some[2])])
        h.killAgent()
        try h.startAgent()
        let counts = try #require(try h.client().call("GetStatus").first?.dictValue?["tasks"]?.dictValue)
        let n64 = Int64(n)
        #expect(counts["paused"]?.int64Value == n64 - 3)
        #expect(counts["canceled"]?.int64Value == 2)
        let active: [Int64] = ["queued", "running", "waiting", "failed"].map { counts[$0]?.int64Value ?? 0 }
        #expect(active.reduce(0, +) == 1)
    }

    @Test func hostileServerFileNameStaysInTheDownloadFolder() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("h.bin", size: 100)
        let r = try h.ferry("download", h.faultURL("h.bin", "cd=../../.bashrc"), "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: h.downloads) == ["_.._.bashrc"])
        #expect(!FileManager.default.fileExists(atPath: h.root + "/.bashrc"))
    }

    @Test func secondAgentRefusesAndReplaceTakesOver() throws {
        let h = try Harness()
        try h.startAgent()
        let second = try h.run(Harness.ferryd, ["--state-dir", h.root + "/state2"])
        #expect(second.status != 0)
        #expect(second.stderr.contains("--replace"))
        #expect(h.agent?.isRunning == true)
        // --replace takes the name over; the old agent leaves.
        let first = try #require(h.agent)
        try h.startAgent(["--replace"])
        try h.waitForExit(first, "the replaced agent")
        #expect(first.terminationStatus != 0)
        #expect(try h.client().call("GetStatus").first?.dictValue?["pid"]?.int64Value == Int64(h.agent!.processIdentifier))
    }

    /// An agent started while the last one is still going away (a restart, an upgrade): the old
    /// connection still owns the name but no longer answers. The new agent waits for the name
    /// instead of refusing to start. (The old one is stopped with SIGSTOP: it keeps its
    /// connection and answers nothing, as an agent past its loop does.)
    @Test func aRestartedAgentWaitsForTheOneGoingAway() throws {
        let h = try Harness()
        try h.startAgent()
        let old = try #require(h.agent)
        kill(old.processIdentifier, SIGSTOP)
        let log = h.root + "/new.log"
        let new = try h.spawnWaitable(Harness.ferryd, ["--state-dir", h.state, "--log-level", "info"], errors: log)
        try h.eventually("the new agent waits") { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("does not answer") }
        kill(old.processIdentifier, SIGKILL)
        try h.eventually("the new agent owns the name") {
            // Calls to the name may still reach the old connection as it goes: NoReply, then the new one.
            (try? AgentProxy(h.client()).getStatus().pid) == Int64(new.processIdentifier)
        }
        #expect(new.isRunning)
    }

    /// Another login of the same user has its own session bus, and its agent the same state
    /// folder: it must not run this agent's tasks too. It stops, saying why; this one goes on.
    @Test func anAgentOnAnotherBusCannotTakeTheSameStore() throws {
        let h = try Harness()
        try h.startAgent()
        let c = try h.client()
        try open(c, "app")
        let paused = try create(c, "app", "http://127.0.0.1:9/x", ["paused": .bool(true)])
        let otherLogin = try Harness()
        let log = otherLogin.root + "/second.log"
        let second = try otherLogin.spawnWaitable(Harness.ferryd, ["--state-dir", h.state, "--log-level", "info"], errors: log)
        try otherLogin.waitForExit(second, "the second agent", timeout: 30)
        #expect(second.terminationStatus != 0)
        let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(said.contains("in use by another ferryd"), "\(said)")
        #expect(try state(h, paused) == "paused")
        #expect(h.agent?.isRunning == true)
    }

    @Test func perHostLimitQueuesTheRest() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--max-per-host", "1"])
        try h.makeFile("l.bin", size: 50_000)
        let c = try h.client()
        try open(c, "app")
        let a = try create(c, "app", h.faultURL("l.bin", "hold=1000&n=1"))
        let b = try create(c, "app", h.faultURL("l.bin", "n=2"))
        try h.eventually("first task holding") { (try h.show(a)["received"] as? Int) == 1000 }
        #expect(try state(h, a) == "running")
        #expect(try state(h, b) == "queued")
        try h.releaseHolds()
        try h.eventually("both complete") { try state(h, a) == "completed" && state(h, b) == "completed" }
        let log = try h.serverLog()
        #expect(log.map(\.query) == ["hold=1000&n=1", "n=2"])
    }

    @Test func cliWithoutSessionBusSaysHowToGetOne() throws {
        let h = try Harness()
        let r = try h.run(Harness.ferry, ["list"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DISPLAY": ""])
        #expect(r.status != 0)
        #expect(r.stderr.contains("dbus-run-session"), "\(r.stderr)")
    }

    @Test func cliStartsTheAgentWhenNoneRuns() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.makeFile("auto.bin", size: 1000)
        let r = try h.ferry("download", h.faultURL("auto.bin"), "--dir", h.downloads, "--wait")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.downloads + "/auto.bin"))
        let status = try h.ferry("status", "--json")
        let obj = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let pid = try #require(obj?["pid"] as? Int)
        kill(pid_t(pid), SIGKILL)
    }
}
