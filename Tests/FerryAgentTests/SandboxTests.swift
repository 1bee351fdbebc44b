import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// A fake Flatpak app built with bubblewrap: a tmpfs root with /usr and /etc, the private bus's
/// socket, the app's ~/.var/app/ID and a /.flatpak-info naming it. Inside, `gdbus` calls the
/// agent; the agent must tell the app apart from the host exactly as it would a real Flatpak.
struct FakeFlatpak {
    let h: Harness
    let id: String
    let info: String
    var home: String { h.root + "/home/.var/app/" + id }

    init(_ h: Harness, id: String, filesystems: [String] = [], shared: [String] = ["network", "ipc"]) throws {
        self.h = h
        self.id = id
        info = h.root + "/\(id).flatpak-info"
        try FileManager.default.createDirectory(atPath: h.root + "/home/.var/app/" + id, withIntermediateDirectories: true)
        try "[Application]\nname=\(id)\n\n[Context]\nshared=\(shared.map { $0 + ";" }.joined())\nfilesystems=\(filesystems.map { $0 + ";" }.joined())\n"
            .write(toFile: info, atomically: true, encoding: .utf8)
    }

    /// gdbus call METHOD ARGS… from inside the sandbox.
    func call(_ method: String, _ args: String...) throws -> Harness.Result {
        try run(["/usr/bin/gdbus", "call", "--session", "--dest", BusNames.agent, "--object-path", BusNames.path,
                 "--method", BusNames.interface + "." + method] + args)
    }

    /// Any command inside the sandbox.
    func run(_ command: [String]) throws -> Harness.Result { try h.run("/usr/bin/bwrap", sandbox(command)) }

    /// A command inside the sandbox that runs on while the test goes on; its output goes to `output`.
    func spawn(_ command: [String], output: String) throws -> Process {
        try h.spawnWaitable("/usr/bin/bwrap", sandbox(command), output: output)
    }

    private func sandbox(_ command: [String]) -> [String] {
        let socket = String(h.busAddress.dropFirst("unix:path=".count).prefix { $0 != "," })
        return ["--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                       "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc", "/etc",
                       "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", socket, socket,
                       "--bind", home, home, "--ro-bind", info, "/.flatpak-info", "--"] + command
    }
}

extension Trait where Self == ConditionTrait {
    /// The fake Flatpak needs Debian's bubblewrap.
    static var needsBubblewrap: Self { .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap"), "needs bubblewrap") }
}

@Suite(.serialized) struct SandboxTests {
    static let appID = "dev.ferry.test.Sandboxed"

    /// The id in gdbus's "(uint64 7,)".
    static func taskID(_ reply: String) -> Int64? {
        reply.split(separator: " ").last.flatMap { Int64($0.filter(\.isNumber)) }
    }

    func refused(_ r: Harness.Result, _ error: String, _ mentioning: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status != 0 && r.stderr.contains("dev.ferry.Error." + error) && (mentioning.isEmpty || r.stderr.contains(mentioning)),
                "\(r.stdout) \(r.stderr)", sourceLocation: sourceLocation)
    }

    @Test(.needsBubblewrap)
    func aSandboxedAppSeesAndControlsOnlyItsOwnTasksAndFolders() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--stall-timeout", "60"])
        try h.makeFile("a.bin", size: 4_000)
        try h.makeFile("held.bin", size: 100_000)
        let downloads = h.root + "/home/Downloads"
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        let hostTask = try #require(Int64(try h.ferry("download", h.faultURL("held.bin", "hold=1000")).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        let app = try FakeFlatpak(h, id: Self.appID)

        // The host's tasks and session do not exist for it; the user's badge is not its to reset.
        for method in ["GetTask", "Pause", "Cancel"] { refused(try app.call(method, "\(hostTask)"), "NoSuchTask") }
        #expect(try app.call("ListTasks", "", "0", "0").stdout.contains("@aa{sv} []"))
        refused(try app.call("OpenSession", BusNames.cliSession, "{}"), "AccessDenied", BusNames.cliSession)
        refused(try app.call("ResetBadge"), "AccessDenied")
        let status = try app.call("GetStatus").stdout
        #expect(status.contains("'store': <''>") && status.contains("'queued': <uint32 0>") && status.contains("'running': <uint32 0>"), "\(status)")
        #expect(try h.show(hostTask)["state"] as? String == "running")

        // Its own session and a download into its own folder; the host sees whose it is.
        let session = Self.appID + ".bg"
        let opened = try app.call("OpenSession", session, "{'keep-events': <false>}")
        #expect(opened.stdout.contains("'inbox': <'\(app.home)/data/ferry/inbox/"), "\(opened.stdout) \(opened.stderr)")
        try FileManager.default.createDirectory(atPath: app.home + "/dl", withIntermediateDirectories: true)
        let created = try app.call("CreateDownload", session, h.faultURL("a.bin"), "{'directory': <'\(app.home)/dl'>}")
        let id = try #require(Self.taskID(created.stdout), "\(created.stdout) \(created.stderr)")
        try h.eventually("the app's download") { try h.show(id)["state"] as? String == "completed" }
        #expect(FileManager.default.fileExists(atPath: app.home + "/dl/a.bin"))
        #expect(try AgentProxy(h.client()).getTask(task: id).app == Self.appID)
        #expect(try AgentProxy(h.client()).getTask(task: hostTask).app == "")
        let listed = try h.ferry("list").stdout.split(separator: "\n")
        #expect(listed.contains { $0.hasPrefix("\(id) ") && $0.hasSuffix("[\(Self.appID)]") } && !listed.contains { $0.hasPrefix("\(hostTask) ") && $0.contains("[") }, "\(listed)")
        #expect(try h.ferry("list", "--json").stdout.contains("\"app\" : \"\(Self.appID)\""))
        // One ListTasks page with both: each row names its own session's app.
        let page = try (try h.client().call("ListTasks", [.string(""), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
            .map { try TaskInfo(bus: $0.dictValue ?? [:]) }
        #expect(page.first { $0.id == id }?.app == Self.appID && page.first { $0.id == hostTask }?.app == "", "\(page.map { ($0.id, $0.app) })")
        #expect(try app.call("GetTask", "\(id)").stdout.contains("'state': <'completed'>"))

        // Nothing outside the sandbox: no command to run, no host folder, no host file.
        let marker = h.root + "/ran"
        refused(try app.call("OpenSession", Self.appID + ".x", "{'launch-command': <['/usr/bin/touch', '\(marker)']>}"),
                "AccessDenied", "launch-command")
        #expect(!FileManager.default.fileExists(atPath: marker))
        refused(try app.call("CreateDownload", session, h.faultURL("a.bin"), "{'directory': <'\(h.downloads)'>}"), "AccessDenied", h.downloads)
        refused(try app.call("CreateDownload", session, h.faultURL("a.bin"), "{'directory': <'\(downloads)'>}"), "AccessDenied", downloads)
        refused(try app.call("CreateUpload", session, h.faultURL("up"), "/etc/passwd", "{}"), "AccessDenied", "/etc/passwd")

        // Another app cannot see the first one's; a granted xdg-download is honoured.
        let other = try FakeFlatpak(h, id: "dev.ferry.test.Other", filesystems: ["xdg-download"])
        refused(try other.call("GetTask", "\(id)"), "NoSuchTask")
        refused(try other.call("GetSession", session), "AccessDenied", session)
        #expect(try other.call("OpenSession", "dev.ferry.test.Other.bg", "{'keep-events': <false>}").status == 0)
        let granted = try other.call("CreateDownload", "dev.ferry.test.Other.bg", h.faultURL("a.bin"), "{'directory': <'\(downloads)'>}")
        let grantedID = try #require(Self.taskID(granted.stdout), "\(granted.stdout) \(granted.stderr)")
        try h.eventually("the granted download") { try h.show(grantedID)["state"] as? String == "completed" }
        #expect(FileManager.default.fileExists(atPath: downloads + "/a.bin"))
    }

    @Test(.needsBubblewrap)
    func aFinishedFileIsHandedOverWhereTheSandboxCanReadIt() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("episode.mp3", size: 6_000)
        let app = try FakeFlatpak(h, id: Self.appID)
        let session = Self.appID + ".background"
        let opened = try app.call("OpenSession", session, "{}")   // keeps events, as the library's sessions do
        #expect(opened.stdout.contains("'inbox': <'\(app.home)/data/ferry/inbox/"), "\(opened.stdout) \(opened.stderr)")
        let id = try #require(Self.taskID(try app.call("CreateDownload", session, h.faultURL("episode.mp3"), "{}").stdout))
        try h.eventually("finished") { try h.show(id)["state"] as? String == "completed" }
        let file = try #require(try AgentProxy(h.client()).getTask(task: id).file)
        #expect(file.hasPrefix(app.home + "/"), "\(file)")
        // From inside: the app reads exactly the bytes; the finished event names the same file.
        let inside = try app.run(["/usr/bin/sha256sum", file])
        let expected = try h.run("/usr/bin/sha256sum", [h.www + "/episode.mp3"]).stdout.prefix(64)
        #expect(inside.status == 0 && inside.stdout.prefix(64) == expected, "\(inside.stderr)")
        #expect(try app.call("FetchEvents", session, "0", "0").stdout.contains("'file': <'\(file)'>"))
    }

    @Test(.needsBubblewrap)
    func aSandboxedAppUploadsByHandingOverADescriptor() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: Self.appID)
        let session = Self.appID + ".up"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let photo = app.home + "/photo.jpg"
        try Data((0..<90_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: URL(fileURLWithPath: photo))
        // gdbus cannot send descriptors: python-dbus inside the sandbox opens the file and sends it.
        let script = """
            import dbus, os, sys
            agent = dbus.Interface(dbus.SessionBus().get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
            fd = os.pipe()[0] if sys.argv[3] == "pipe" else os.open(sys.argv[3], os.O_RDONLY)
            print(agent.CreateUploadFromFd(sys.argv[1], sys.argv[2], dbus.types.UnixFd(fd), {}))
            """
        let sent = try app.run(["/usr/bin/python3", "-c", script, session, h.faultURL("upload/photo.jpg"), photo])
        let id = try #require(Int64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(sent.stdout) \(sent.stderr)")
        try h.eventually("the upload") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/photo.jpg")) == Data(contentsOf: URL(fileURLWithPath: photo)))
        let pipe = try app.run(["/usr/bin/python3", "-c", script, session, h.faultURL("upload/p"), "pipe"])
        #expect(pipe.status != 0 && pipe.stderr.contains("dev.ferry.Error.InvalidArgument") && pipe.stderr.contains("not a regular file"), "\(pipe.stderr)")
        // The host's session takes no descriptor from it either.
        _ = try AgentProxy(h.client()).perform(AgentCalls.openUserSession)
        let other = try app.run(["/usr/bin/python3", "-c", script, BusNames.cliSession, h.faultURL("upload/p"), photo])
        #expect(other.status != 0 && other.stderr.contains("dev.ferry.Error.AccessDenied"), "\(other.stderr)")
    }

    @Test(.needsBubblewrap)
    func anAppsSignalsReachOnlyItAndTheHost() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("a.bin", size: 2_000)
        let listener = Harness.packageRoot + "/Tests/Support/signal-listener.py"   // not inside the sandbox: passed as -c
        let heardByOther = h.root + "/other.txt", heardByHost = h.root + "/host.txt"
        let otherApp = try FakeFlatpak(h, id: "dev.ferry.test.Other")
        let other = try otherApp
            .spawn(["/usr/bin/python3", "-c", try String(contentsOfFile: listener, encoding: .utf8)], output: heardByOther)
        let host = try h.spawnWaitable("/usr/bin/python3", [listener], output: heardByHost)
        func heard(_ file: String) -> [String] { ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        try h.eventually("both listening") { heard(heardByOther).first == "ready" && heard(heardByHost).first == "ready" }

        let app = try FakeFlatpak(h, id: Self.appID)
        #expect(try app.call("OpenSession", Self.appID + ".bg", "{'keep-events': <false>}").status == 0)
        let id = try #require(Self.taskID(try app.call("CreateDownload", Self.appID + ".bg", h.faultURL("a.bin"), "{}").stdout))
        try h.eventually("the app's download") { try h.show(id)["state"] as? String == "completed" }
        // Then a host task, paused: the listeners stop when they hear of it; signals arrive in order.
        let proxy = try AgentProxy(h.client())
        try proxy.perform(AgentCalls.openUserSession)
        var paused = TaskOptions()
        paused.paused = true
        let marker = try proxy.createDownload(session: BusNames.cliSession, url: h.faultURL("a.bin"), options: paused)
        try h.eventually("the host heard its task") { !host.isRunning }
        // The other app hears of neither (issue 38, item 7); its own paused task, made after
        // the host's, ends its listening: the host's would have come first.
        #expect(try otherApp.call("OpenSession", "dev.ferry.test.Other.bg", "{'keep-events': <false>}").status == 0)
        let own = try #require(Self.taskID(try otherApp.call("CreateDownload", "dev.ferry.test.Other.bg", h.faultURL("a.bin"),
                                                             "{'paused': <true>}").stdout))
        try h.eventually("the other app heard its own task") { !other.isRunning }
        #expect(heard(heardByOther) == ["ready", "\(own) paused"])
        #expect(heard(heardByHost).contains("\(id) completed") && heard(heardByHost).last == "\(marker) paused", "\(heard(heardByHost))")
    }

    @Test func callersThatLeaveBeforeTheyAreIdentifiedDoNotHurtTheAgent() throws {
        let h = try Harness()
        try h.startAgent()
        // dbus-send without --print-reply sends and leaves at once: the agent's question to the
        // bus about the caller, and its look at /proc, race with the caller going away.
        var senders: [Process] = []
        for method in Array(repeating: ["GetStatus", "ListTasks"], count: 20).joined() {
            var args = ["--session", "--dest=" + BusNames.agent, BusNames.path, BusNames.interface + "." + method]
            if method == "ListTasks" { args += ["string:", "uint64:0", "uint32:0"] }
            senders.append(try h.spawnWaitable("/usr/bin/dbus-send", args))
        }
        try h.eventually("the callers gone") { senders.allSatisfy { !$0.isRunning } }
        #expect(try AgentProxy(h.client()).getStatus().pid == Int64(h.agent?.processIdentifier ?? -1))
        #expect(h.agent?.isRunning == true)
    }

    /// The app leaves with its events unread: the agent must start it as itself.
    func appLeavesWithEventsUnread(_ h: Harness, _ app: FakeFlatpak, session: String) throws {
        try h.makeFile("news.bin", size: 3_000)
        #expect(try app.call("OpenSession", session, "{}").status == 0)   // gdbus leaves the bus right after
        let id = try #require(Self.taskID(try app.call("CreateDownload", session, h.faultURL("news.bin"), "{}").stdout))
        try h.eventually("the download") { try h.show(id)["state"] as? String == "completed" }
    }

    @Test(.needsBubblewrap)
    func aDBusActivatableAppIsRelaunchedByActivatingItsAction() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        // Its exported desktop entry says DBusActivatable; the bus can start it by its id.
        let applications = h.root + "/home/.local/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Sandboxed\nExec=/bin/false\nDBusActivatable=true\n"
            .write(toFile: applications + "/\(Self.appID).desktop", atomically: true, encoding: .utf8)
        let record = h.root + "/activated.json"
        try "[D-BUS Service]\nName=\(Self.appID)\nExec=/usr/bin/python3 \(Harness.packageRoot)/Tests/Support/activation-recorder.py \(Self.appID) \(record)\n"
            .write(toFile: h.root + "/services/\(Self.appID).service", atomically: true, encoding: .utf8)

        let session = Self.appID + ".background"
        try appLeavesWithEventsUnread(h, try FakeFlatpak(h, id: Self.appID), session: session)
        // A whole line: the recorder may be caught between creating the file and writing it.
        try h.eventually("the activation") { (try? Data(contentsOf: URL(fileURLWithPath: record)))?.contains(10) == true }
        let call = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: record)).split(separator: 10)[0])
        let expected: NSDictionary = ["method": "ActivateAction", "args": ["ferry-background-events", [session], [String: String]()]]
        #expect((call as? NSDictionary) == expected, "\(call)")
        // It answered and left the bus without handling the events: counted, and retried later.
        try h.eventually("the exit to be counted") {
            (try AgentProxy(h.client()).getSession(session: session).relaunch).contains("exited 1 time(s)")
        }
    }

    @Test(.needsBubblewrap)
    func anAppWithoutActivationIsRelaunchedWithFlatpakRun() throws {
        let h = try Harness()
        try h.startFaultServer()
        // No flatpak on this machine (and no runtime to run an app in): a stand-in records its arguments.
        let bin = h.root + "/bin", record = h.root + "/flatpak-run.txt"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > \(record).tmp && mv \(record).tmp \(record)\n"
            .write(toFile: bin + "/flatpak", atomically: true, encoding: .utf8)
        chmod(bin + "/flatpak", 0o755)
        try h.startAgent(environment: ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])

        let session = Self.appID + ".background"
        try appLeavesWithEventsUnread(h, try FakeFlatpak(h, id: Self.appID), session: session)
        try h.eventually("flatpak run") { FileManager.default.fileExists(atPath: record) }
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "run\n--env=FERRY_BACKGROUND_SESSION=\(session)\n\(Self.appID)\n")
    }
}
