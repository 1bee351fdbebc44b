import Ferry
import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Credentials live in the user's keyring (GNOME Keyring on the test's bus), never in the
/// store, the log, `ferry list/show` or events: the one in a URL until its task ends, an app's
/// answer for its session or permanently, as it asked.
@Suite(.serialized) struct CredentialTests {
    /// The faultserver's authsha: the credential's hash, so the URL holds no password.
    static func sha256(_ s: String, _ h: Harness) throws -> String {
        String(try h.run("/bin/sh", ["-c", "printf %s \"$0\" | sha256sum", s]).stdout.prefix(64))
    }

    /// The credential's password appears nowhere the agent writes or shows.
    static func expectNowhere(_ password: String, _ h: Harness, _ ids: [Int64]) throws {
        let needle = Data(password.utf8)
        for (name, bytes) in try h.storedAndLoggedBytes() {
            #expect(bytes.range(of: needle) == nil, "the password is in \(name)")
        }
        let list = try h.ferry("list", "--json")
        #expect(list.status == 0 && !list.stdout.contains(password))
        for id in ids {
            let show = try h.ferry("show", String(id))
            #expect(show.status == 0 && !show.stdout.contains(password))
        }
    }

    /// user:password in a URL: the store gets the URL without them, the keyring keeps them
    /// while the task lives, so a kill -9 and restart still authenticate; gone when it ends.
    @Test func aURLsCredentialIsKeptInTheKeyringAcrossARestart() throws {
        let h = try Harness()
        try h.startKeyring()
        try h.startFaultServer()
        try h.startAgent()
        let body = try h.makeFile("private.bin", size: 400_000)
        let password = "Pw-\(UInt32.random(in: 0...UInt32.max))"
        let url = h.faultURL("private.bin", "rate=100000&authsha=\(try Self.sha256("ann:" + password, h))")
            .replacingOccurrences(of: "http://", with: "http://ann:\(password)@")
        let r = try h.ferry("download", "--output", h.root + "/private.bin", url)
        let id = try r.taskID()
        try h.eventually("some bytes") { (try h.show(id)["received"] as? Int ?? 0) > 50_000 }
        #expect(try h.keyringItems(["kind": "task", "task": String(id)])?.count == 1)
        try Self.expectNowhere(password, h, [id])

        h.killAgent()
        try h.startAgent()
        try h.eventually("completed after the restart", timeout: 40) { try h.show(id)["state"] as? String == "completed" }
        #expect(FileManager.default.contents(atPath: h.root + "/private.bin") == body)
        try h.eventually("the task's credential gone from the keyring") { try h.keyringItems(["kind": "task"])?.isEmpty == true }
        try Self.expectNowhere(password, h, [id])
    }

    /// An app's answer: "for-session" serves the session's next task without a challenge (not
    /// after a restart); "permanent" is in the keyring and serves a task after a restart.
    @Test func anAppsAnswerIsKeptAsLongAsItAsked() throws {
        let h = try Harness()
        try h.startKeyring()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("kept.bin", size: 20_000)
        let password = "Pw-\(UInt32.random(in: 0...UInt32.max))"
        let url = URL(string: h.faultURL("kept.bin", "authsha=\(try Self.sha256("ann:" + password, h))"))!
        let rec = Recorder()
        func config() -> FerrySessionConfiguration {
            var c = FerrySessionConfiguration.background(withIdentifier: "dev.ferry.test.Kept")
            c.busAddress = h.busAddress
            c.defaultDestination = URL(fileURLWithPath: h.root + "/unclaimed")
            return c
        }
        func download(_ session: FerrySession) throws -> UInt64 {
            let task = try session.downloadTask(with: url)
            task.resume()
            let id = task.taskIdentifier
            let calls = try rec.wait("task \(id) completed") { $0.completed(id) != nil }
            #expect(calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
            return id
        }
        func challenges() -> Int { rec.calls.count { if case .challenge = $0 { return true }; return false } }

        rec.answers = [.use(FerryCredential(user: "ann", password: password, persistence: .forSession))]
        var session = try FerrySession(configuration: config(), delegate: rec)
        let first = try download(session)
        let second = try download(session)
        #expect(challenges() == 1)
        #expect(try h.keyringItems(["kind": "space"])?.isEmpty == true)   // memory only
        session.disconnect()

        h.killAgent()
        try h.startAgent()
        rec.answers = [.use(FerryCredential(user: "ann", password: password, persistence: .permanent))]
        session = try FerrySession(configuration: config(), delegate: rec)
        let third = try download(session)
        #expect(challenges() == 2)   // the session's answer went with the agent
        #expect(try h.keyringItems(["kind": "space", "host": "127.0.0.1", "realm": "ferry-test"])?.count == 1)
        session.disconnect()

        h.killAgent()
        try h.startAgent()
        session = try FerrySession(configuration: config(), delegate: rec)
        let fourth = try download(session)
        #expect(challenges() == 2)   // the keyring answered
        session.disconnect()
        try Self.expectNowhere(password, h, [first, second, third, fourth].map { Int64($0) })
    }

    /// Tasks an older agent stored with user:password in the URL: the next start moves the
    /// credential of one still to run into the keyring, drops that of an ended one, and leaves
    /// neither on any page of the store; the waiting task still authenticates.
    @Test func credentialsAnOlderAgentStoredInURLsAreMovedOut() throws {
        let h = try Harness()
        try h.startKeyring()
        try h.startFaultServer()
        try h.startAgent()
        let body = try h.makeFile("old.bin", size: 50_000)
        try h.makeFile("done.bin", size: 1_000)
        let password = "Pw-\(UInt32.random(in: 0...UInt32.max))"
        let done = try #require(Int64(try h.ferry("download", "--output", h.root + "/done.bin", h.faultURL("done.bin"), "--wait")
            .stdout.split(separator: "\n").first ?? ""))
        let url = h.faultURL("old.bin", "authsha=\(try Self.sha256("ann:" + password, h))")
        let r = try h.ferry("download", "--output", h.root + "/old.bin", "--start-at", "2099-01-01T00:00", url)
        let waiting = try r.taskID()
        h.killAgent(signal: SIGTERM)
        // What an agent before the keyring stored: the credential in the URL.
        let sql = "UPDATE tasks SET url = replace(url, 'http://', 'http://ann:\(password)@') WHERE id IN (\(done), \(waiting));"
            + "DELETE FROM meta WHERE key = 'url-credentials-moved';"
        #expect(try h.run("/usr/bin/sqlite3", [StateFolder(h.state).store, sql]).status == 0)
        #expect(try h.storedAndLoggedBytes().contains { $0.1.range(of: Data(password.utf8)) != nil })   // the test's own check can fail

        try h.startAgent()
        try h.eventually("the waiting task's credential in the keyring") {
            try h.keyringItems(["kind": "task", "task": String(waiting)])?.count == 1
        }
        try Self.expectNowhere(password, h, [done, waiting])
        #expect(try h.ferry("resume", String(waiting)).status == 0)
        try h.eventually("completed with the moved credential") { try h.show(waiting)["state"] as? String == "completed" }
        #expect(FileManager.default.contents(atPath: h.root + "/old.bin") == body)
        try Self.expectNowhere(password, h, [done, waiting])
    }
}
