import FerryCore
import Testing

/// A sandboxed app's limits (issue 31, item 8): beyond one, LimitExceeded naming it and its
/// ferryd option; the host is not limited.
@Suite struct AppLimitsTests {
    let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                           writable: ["/home/u/.var/app/org.example.App"])

    func driver() throws -> CoreDriver {
        var s = AgentCore.Settings(stateDirectory: "/state")
        s.appLimits.batch = 3
        s.appLimits.unfinishedTasks = 5
        s.appLimits.sessions = 2
        s.appLimits.unacknowledgedEvents = 2
        var d = CoreDriver(s)
        try d.start()
        return d
    }

    func drafts(_ n: Int) -> [TaskRecord] { (0..<n).map { TaskRecord(session: "", url: "http://a/\($0)", host: "a") } }

    func refused(_ d: inout CoreDriver, _ r: some CoreRequest, mentioning: String) {
        do {
            _ = try d.request(r, from: app)
            Issue.record("accepted")
        } catch let e as FerryError {
            #expect(e.kind == .limitExceeded && e.message.contains(mentioning), "\(e)")
        } catch { Issue.record("\(error)") }
    }

    @Test func batchesTasksAndSessionsAreBounded() throws {
        var d = try driver()
        let mine = "org.example.App.a"
        _ = try d.request(.openSession(mine, SessionOptions(), peer: ":1.2"), from: app)
        refused(&d, .createTasks(session: mine, drafts(4)), mentioning: "--app-max-batch")
        _ = try d.request(.createTasks(session: mine, drafts(3)), from: app)
        refused(&d, .createTasks(session: mine, drafts(3)), mentioning: "--app-max-tasks")
        _ = try d.request(.createTasks(session: mine, drafts(2)), from: app)
        // An ended task no longer counts.
        _ = try d.request(.cancel(1), from: app)
        _ = try d.request(.createTasks(session: mine, drafts(1)), from: app)
        // Sessions: a second one, then none; reopening one it has is not a new one.
        _ = try d.request(.openSession("org.example.App.b", SessionOptions(), peer: ":1.2"), from: app)
        refused(&d, .openSession("org.example.App.c", SessionOptions(), peer: ":1.2"), mentioning: "--app-max-sessions")
        _ = try d.request(.openSession(mine, SessionOptions(), peer: ":1.2"), from: app)
        // The host is not limited.
        try d.openSession("host")
        _ = try d.request(.createTasks(session: "host", drafts(10)))
    }

    @Test func unacknowledgedEventsStopNewTasksUntilAcknowledged() throws {
        var d = try driver()
        let mine = "org.example.App.a"
        _ = try d.request(.openSession(mine, SessionOptions(), peer: ":1.2"), from: app)
        _ = try d.request(.createTasks(session: mine, drafts(3)), from: app)
        for id in Int64(1)...3 { _ = try d.request(.cancel(id), from: app) }   // three completed events wait
        refused(&d, .createTasks(session: mine, drafts(1)), mentioning: "--app-max-unacknowledged-events")
        let events = try d.request(.fetchEvents(session: mine, after: 0, limit: 0), from: app).events
        let last: UInt64 = events.last?.seq ?? 0
        _ = try d.request(.acknowledgeEvents(session: mine, upTo: last), from: app)
        _ = try d.request(.createTasks(session: mine, drafts(1)), from: app)
    }
}
