import Testing
@testable import FerryCore

/// The sandbox rule as a decision alone: what an app's request becomes, or why it is refused,
/// over a read of sessions and tasks (no core, no turn).
@Suite struct SandboxPolicyTests {
    let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                           writable: ["/home/u/.var/app/org.example.App"], network: true)

    func policy(_ ledger: MemoryLedger = MemoryLedger()) -> SandboxPolicy {
        var book = SessionBook()
        var mine = SessionConfig()
        mine.app = app.id
        book.configs = ["org.example.App": mine, "org.example.App.b": mine, "host": SessionConfig(), "org.other.App": {
            var c = SessionConfig(); c.app = "org.other.App"; return c }()]
        ledger.sessions = book.configs
        var hostTask = TaskRecord(session: "host", url: "http://a/1", host: "a")
        hostTask.id = 1
        var ownTask = TaskRecord(session: "org.example.App.b", url: "http://a/2", host: "a")
        ownTask.id = 2
        ledger.tasks = [1: hostTask, 2: ownTask]
        return SandboxPolicy(app: app, sessions: book, limits: AppLimits(), ledger: ledger, liveSession: { _ in nil })
    }

    /// What the policy grants `r` (its reach, then its rules of its own), or throws.
    func decide<R: CoreRequest>(_ r: R, _ policy: SandboxPolicy? = nil) throws -> Grant {
        let policy = policy ?? self.policy()
        let grant = try policy.grant(r.reach)
        try r.admit(policy)
        return grant
    }

    func refused<R: CoreRequest>(_ r: R, _ kind: FerryError.Kind) {
        do {
            _ = try decide(r)
            Issue.record("\(r) was allowed")
        } catch let e as FerryError { #expect(e.kind == kind, "\(r): \(e)") } catch { Issue.record("\(error)") }
    }

    @Test func itsOwnSessionsAndTasksOnly() throws {
        #expect(try decide(.clearFinished(session: "")).sessions == ["org.example.App", "org.example.App.b"])
        #expect(try decide(.listTasks(session: "", after: 0, limit: 0)).sessions == ["org.example.App", "org.example.App.b"])
        #expect(try decide(.listTasks(session: "org.example.App.b", after: 0, limit: 0)).sessions == ["org.example.App.b"])
        #expect(try decide(.pause(2)).sessions == nil)                       // its task, as asked
        refused(.pause(1), .noSuchTask)                                      // the host's task does not exist for it
        refused(.getSession("org.other.App"), .accessDenied)                // another app's session, by name
        refused(.resetBadge, .accessDenied)
        var launching = SessionOptions()
        launching.launchCommand = ["/bin/sh"]
        refused(.openSession("org.example.App", launching, peer: ":1.2"), .accessDenied)
        refused(.openSession("org.exampleX", SessionOptions(), peer: ":1.2"), .accessDenied)   // outside its namespace
    }

    @Test func itsTasksRankBelowTheUsersAndNeedTheNetwork() throws {
        var draft = TaskRecord(session: "", url: "http://a/3", host: "a")
        draft.priority = 1
        #expect(try decide(.createTasks(session: "org.example.App", [draft])).app == app)
        #expect(SandboxPolicy.rankedBelowTheUser(draft).priority == 0.5)
        var offline = policy()
        offline = SandboxPolicy(app: SandboxedApp(id: app.id, kind: .flatpak, home: app.home, writable: app.writable, network: false),
                                sessions: offline.sessions, limits: offline.limits, ledger: offline.ledger, liveSession: { _ in nil })
        #expect(throws: FerryError.self) { try decide(.createTasks(session: "org.example.App", [draft]), offline) }
    }
}
