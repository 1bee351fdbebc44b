import Testing
@testable import FerryCore

/// What a sandboxed app may see and do: its id and folders from /.flatpak-info, its own sessions
/// and tasks, its signals, its relaunch.
@Suite struct SandboxAccessTests {
    let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                           writable: ["/home/u/.var/app/org.example.App", "/home/u/Downloads"])

    @Test func flatpakInfoGivesTheIdAndTheFoldersItMayWrite() {
        let info = "[Application]\nname=org.example.App\nruntime=x\n\n[Context]\nfilesystems=xdg-download;xdg-music:ro;~/Notes;!home;/srv/data:create;host-etc;\n"
        let a = SandboxedApp.flatpak(info: info, userHome: "/home/u", userDirs: ["xdg-download": "/home/u/Downloads", "xdg-music": "/home/u/Music"])
        #expect(a?.id == "org.example.App")
        #expect(a?.writable == ["/home/u/.var/app/org.example.App", "/home/u/Downloads", "/home/u/Notes", "/srv/data"])
        #expect(a?.mayWrite("/home/u/Downloads/x") == true && a?.mayWrite("/home/u/DownloadsX") == false && a?.mayWrite("/home/u/Music") == false)
        #expect(SandboxedApp.flatpak(info: "[Application]\nname=../x\n", userHome: "/h", userDirs: [:]) == nil)
        #expect(SandboxedApp.snap(label: "snap.firefox.firefox (enforce)", userHome: "/h")?.writable == ["/h/snap/firefox"])
        #expect(SandboxedApp.snap(label: "unconfined", userHome: "/h") == nil)
    }

    @Test func signalsSayWhichAppTheyAreAbout() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("host")
        _ = try d.request(.openSession("org.example.App.mine", SessionOptions(), peer: ":1.2"), from: app)
        let created = try d.effects(of: .createTasks(session: "org.example.App.mine", [TaskRecord(session: "", url: "http://a/1", host: "a")]))
        #expect(created.contains(.taskChanged(1, .queued, app: app.id)))
        let hostCreated = try d.effects(of: .createTasks(session: "host", [TaskRecord(session: "", url: "http://a/2", host: "a")]))
        #expect(hostCreated.contains(.taskChanged(2, .queued, app: "")))
        _ = try d.request(.cancel(1))
        _ = try d.request(.cancel(2))
        let removed = try d.effects(of: .removeTasks([1, 2]))
        #expect(removed.contains(.tasksRemoved([2], app: "")) && removed.contains(.tasksRemoved([1], app: app.id)))
    }

    @Test func aSandboxedAppIsRelaunchedAsItselfUnlessItSaysNo() throws {
        var d = CoreDriver()
        try d.start()
        var quiet = SessionOptions()
        quiet.relaunch = false
        for (session, options) in [("org.example.App.mine", SessionOptions()), ("org.example.App.quiet", quiet)] {
            _ = try d.request(.openSession(session, options, peer: ":1.2"), from: app)
            let id = try d.download("http://a/\(session)", session: session)
            try d.wake(.schedule)
            try d.run(.transferEnded(task: id, received: 0, TransferOutcome(curlCode: 0, httpStatus: 404)))
        }
        #expect(try d.run(.peerLeft(":1.2")).launchTargets == [.app(id: app.id, kind: .flatpak)])
    }

    @Test func anAppSeesOnlyItsOwnSessionsAndTasks() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("host")
        let hostTask = try d.download("http://a/1", session: "host")
        _ = try d.request(.openSession("org.example.App.mine", SessionOptions(), peer: ":1.2"), from: app)
        let mineTask = try d.download("http://a/2", session: "org.example.App.mine")
        #expect(d.core.app(ofSession: "org.example.App.mine") == app.id && d.core.app(ofSession: "host") == "")
        func denied<R: CoreRequest>(_ r: R) -> FerryError.Kind? {
            do { _ = try d.request(r, from: app); return nil } catch let e as FerryError { return e.kind } catch { return nil }
        }
        #expect(denied(.getTask(hostTask)) == .noSuchTask)
        #expect(denied(.cancel(hostTask)) == .noSuchTask)
        #expect(denied(SetTaskURL(hostTask, url: "http://b/1", host: "b")) == .noSuchTask)
        #expect(d.ledger.tasks[hostTask]?.url == "http://a/1")
        #expect(denied(SetTaskURL(mineTask, url: "http://b/2", host: "b")) == nil)
        #expect(denied(.removeTasks([mineTask, hostTask])) == .noSuchTask)
        #expect(denied(.getTask(mineTask)) == nil)
        #expect(denied(.createTasks(session: "host", [TaskRecord(session: "", url: "http://a/3", host: "a")])) == .accessDenied)
        #expect(denied(.resetBadge) == .accessDenied)
        var launching = SessionOptions()
        launching.launchCommand = ["/bin/true"]
        #expect(denied(.openSession("org.example.App.other", launching, peer: ":1.2")) == .accessDenied)
        let listed = try d.request(.listTasks(session: "", after: 0, limit: 0), from: app)
        #expect(listed.map(\.id) == [mineTask])
        let paused = try d.request(.pauseAll(session: ""), from: app)
        #expect(paused == 1 && d.ledger.tasks[hostTask]?.state != .paused)
        // The host keeps seeing everything, and reopening an app's session does not take it over.
        _ = try d.request(.openSession("org.example.App.mine", SessionOptions(), peer: ":1.1"))
        #expect(d.core.app(ofSession: "org.example.App.mine") == app.id)
        let all = try d.request(.listTasks(session: "", after: 0, limit: 0))
        #expect(all.map(\.id) == [hostTask, mineTask])
    }

    /// A session an app opened outside its own namespace before apps were held to it (the CLI's,
    /// say) is the host's again when the host opens it: its tasks never go to that app.
    @Test func theHostTakesBackASquattedSession() throws {
        var d = CoreDriver()
        var squatted = SessionConfig()
        squatted.app = "com.evil.App"
        squatted.appHome = "/home/u/.var/app/com.evil.App"
        d.ledger.sessions["dev.ferry.cli"] = squatted
        try d.start()
        let opened = try d.request(.openSession("dev.ferry.cli", SessionOptions(), peer: ":1.2"))
        #expect(!opened.created && opened.inbox == StateFolder("/state").inbox("dev.ferry.cli"))
        #expect(d.core.app(ofSession: "dev.ferry.cli") == "" && d.ledger.sessions["dev.ferry.cli"]?.app == "")
    }
}