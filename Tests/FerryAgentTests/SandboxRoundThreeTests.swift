import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// What a sandboxed app (a fake Flatpak) could still make the agent do to the host's files,
/// signals and queue (issue 38, items 4–12), each refused; a control step shows the attempt
/// reached the agent.
@Suite(.serialized) struct SandboxRoundThreeTests {
    let fm = FileManager.default

    /// The seq of the app's last event (gdbus prints them as `(uint64 N, 'kind', …), (N, 'kind', …)`).
    static func lastSeq(_ fetched: String) -> UInt64? {
        fetched.components(separatedBy: "(").dropFirst().compactMap { piece -> UInt64? in
            let rest = piece.hasPrefix("uint64 ") ? piece.dropFirst(7) : Substring(piece)
            let digits = rest.prefix { $0.isNumber }
            return rest.dropFirst(digits.count).hasPrefix(", '") ? UInt64(digits) : nil
        }.max()
    }

    /// An upload's reply lands in the app's inbox; the app swaps that folder for a link to a
    /// host folder holding a file of the reply's name, then acknowledges the event: the agent
    /// removes the reply through the folder opened without links, so the host's file stays.
    @Test(.needsBubblewrap)
    func aReplyIsNotRemovedThroughALink() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".up"
        #expect(try app.call("OpenSession", session, "{}").status == 0)
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: app.home + "/doc.bin"))
        let created = try app.call("CreateUpload", session, h.faultURL("upload/doc.bin"), app.home + "/doc.bin", "{'method': <'POST'>}")
        let id = try #require(SandboxTests.taskID(created.stdout), "\(created.stdout) \(created.stderr)")
        try h.eventually("uploaded") { try h.show(id)["state"] as? String == "completed" }
        let reply = try #require(h.show(id)["reply-file"] as? String)
        let inbox = StateFolder.appInbox(appHome: app.home, session: session)
        #expect(reply.hasPrefix(inbox + "/") && fm.fileExists(atPath: reply), "\(reply)")
        // The host's folder, with a file of the reply's name.
        let host = h.root + "/host-documents"
        try fm.createDirectory(atPath: host, withIntermediateDirectories: true)
        let precious = host + "/" + (reply as NSString).lastPathComponent
        try "the user's".write(toFile: precious, atomically: true, encoding: .utf8)
        try fm.moveItem(atPath: inbox, toPath: inbox + ".aside")
        try fm.createSymbolicLink(atPath: inbox, withDestinationPath: host)
        let fetched = try app.call("FetchEvents", session, "0", "100")
        let seq = try #require(Self.lastSeq(fetched.stdout), "\(fetched.stdout) \(fetched.stderr)")
        #expect(try app.call("AcknowledgeEvents", session, "\(seq)").status == 0)
        try h.eventually("the agent tried to remove the reply") { h.agentLog.contains("did not remove \(reply)") }
        #expect(fm.fileExists(atPath: precious), "the host's file was removed through the app's link")
        #expect(fm.fileExists(atPath: inbox + ".aside/" + (reply as NSString).lastPathComponent))
    }

    /// An app's popup offers no Open or Show in folder on the app's file: a click starts the
    /// app (its session's launch), and the host's opener never runs on the app-chosen bytes.
    @Test(.needsBubblewrap)
    func anAppsPopupOpensNoFileOnTheHost() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        let (env, opened) = try h.pdfOpenerDesktop()
        try h.startAgent(["--popup-window-ms", "100"], environment: env)
        try Data("%PDF-1.4\n%test\n".utf8).write(to: URL(fileURLWithPath: h.www + "/invoice.pdf"))
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".pop"
        #expect(try app.call("OpenSession", session, "{'popups': <true>}").status == 0)
        let id = try #require(SandboxTests.taskID(try app.call("CreateDownload", session, h.faultURL("invoice.pdf"), "{}").stdout))
        try h.eventually("a popup") { try !h.popups().isEmpty }
        let popup = try h.popups()[0]
        #expect(popup.summary == "Download complete!" && popup.body == "invoice.pdf", "\(popup)")   // the control: it was the app's
        #expect(popup.actions == ["default", "Open"], "\(popup.actions)")
        #expect(try h.show(id)["state"] as? String == "completed")
        _ = try h.client().callRaw(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "dev.ferry.Test", method: "Invoke", args: [.uint32(UInt32(popup.id)), .string("default")])
        try h.eventually("the app started (here: flatpak is missing)") { h.agentLog.contains("session \(session): cannot start flatpak") }
        #expect(!fm.fileExists(atPath: opened), "the host opened the app's file")
    }

    /// An app's upload is sent from the agent's own copy; the app is shown no path of the
    /// agent's state (GetTask, ListTasks), the user is (the control: the copy is there).
    @Test(.needsBubblewrap)
    func anAppSeesNoPathOfTheAgentsState() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".up"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        try Data(repeating: 1, count: 1_000).write(to: URL(fileURLWithPath: app.home + "/doc.bin"))
        let created = try app.call("CreateUpload", session, "http://127.0.0.1:9/up", app.home + "/doc.bin", "{'paused': <true>}")
        let id = try #require(SandboxTests.taskID(created.stdout), "\(created.stdout) \(created.stderr)")
        let copy = try #require(try AgentProxy(h.client()).getTask(task: id).uploadFile)
        #expect(copy.hasPrefix(h.state + "/"), "\(copy)")
        for seen in [try app.call("GetTask", "\(id)"), try app.call("ListTasks", session, "0", "10")] {
            #expect(seen.status == 0 && seen.stdout.contains("'kind': <'upload'>") && !seen.stdout.contains(h.state),
                    "\(seen.stdout) \(seen.stderr)")
        }
    }

    /// With one transfer at a time, an app's later priority-1.0 task does not start before the
    /// user's earlier queued download: an app's priority orders its own tasks only.
    @Test(.needsBubblewrap)
    func anAppsPriorityDoesNotJumpTheUsersQueue() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--max-transfers", "1"])
        for name in ["first.bin", "users.bin", "apps.bin"] { try h.makeFile(name, size: 20_000) }
        let first = try h.ferry("download", h.faultURL("first.bin", "hold=10000")).taskID()
        try h.eventually("the slot taken") { (try h.show(first)["received"] as? Int) == 10_000 }
        let users = try h.ferry("download", h.faultURL("users.bin")).taskID()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let apps = try #require(SandboxTests.taskID(try app.call("CreateDownload", session, h.faultURL("apps.bin"), "{'priority': <1.0>}").stdout))
        #expect(try h.show(apps)["state"] as? String == "queued")   // the control: the app's task waits too
        try h.releaseHolds()
        for id in [first, users, apps] { try h.eventually("task \(id) done") { try h.show(id)["state"] as? String == "completed" } }
        let order = try h.serverLog().map(\.path).filter { $0 != "/first.bin" }
        #expect(order == ["/users.bin", "/apps.bin"], "\(order)")
    }

    /// A descriptor whose reads block (here a FUSE file that hangs, as a hung network mount
    /// would) holds up only its owner's copies: an app's upload is copied and queued meanwhile.
    @Test(.needsBubblewrap, .enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/fusepy.py")
                                        && FileManager.default.fileExists(atPath: "/dev/fuse"), "needs python3-fusepy and /dev/fuse"))
    func aBlockedCopyHoldsUpOnlyItsOwner() throws {
        let h = try Harness()
        try h.startAgent()
        let mount = h.root + "/hung"
        try fm.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let release = h.root + "/release"
        let fs = try h.spawnWaitable("/usr/bin/python3", [Harness.packageRoot + "/Tests/Support/hung-fs.py", mount, "100000", release],
                                     output: h.root + "/fs.txt")
        func letGo() { let f = open(release, O_WRONLY | O_NONBLOCK); if f >= 0 { _ = write(f, "go\n", 3); close(f) } }
        defer {
            letGo()
            _ = try? h.run("/bin/umount", ["-l", mount])
            kill(fs.processIdentifier, SIGKILL)
        }
        try h.eventually("the FUSE mount") { ((try? String(contentsOfFile: h.root + "/fs.txt", encoding: .utf8)) ?? "").contains("ready") }
        // The host's program hands over the hung file: its copy blocks.
        let script = """
            import dbus, os, sys
            agent = dbus.Interface(dbus.SessionBus().get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
            agent.OpenSession("dev.ferry.cli", {})
            print(agent.CreateUploadFromFd("dev.ferry.cli", sys.argv[1], dbus.types.UnixFd(os.open(sys.argv[2], os.O_RDONLY)),
                                           {"paused": True}, timeout=120), flush=True)
            """
        let hung = try h.spawnWaitable("/usr/bin/python3", ["-c", script, "http://127.0.0.1:9/up", mount + "/hung.bin"],
                                       output: h.root + "/hung.txt")
        try h.eventually("the agent's copy reads the hung file") {
            ((try? String(contentsOfFile: h.root + "/fs.txt", encoding: .utf8)) ?? "").contains("reading")
        }
        // The app's upload by path is copied too, on its own queue.
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".up"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        try Data(repeating: 2, count: 5_000).write(to: URL(fileURLWithPath: app.home + "/doc.bin"))
        let created = try app.call("CreateUpload", session, "http://127.0.0.1:9/up", app.home + "/doc.bin", "{'paused': <true>}")
        #expect(SandboxTests.taskID(created.stdout) != nil, "\(created.stdout) \(created.stderr)")
        #expect(hung.isRunning, "the hung copy ended before the app's: the control failed")
        letGo()
        try h.waitForExit(hung, "the host's copy, released")
        #expect(Int64(((try? String(contentsOfFile: h.root + "/hung.txt", encoding: .utf8)) ?? "").filter(\.isNumber)) != nil)
    }

    /// Nested app ids: org…Nest names sessions inside the namespace of org…Nest.Child before that
    /// app runs. The child still gets its own sessions of those names, sees them under its names,
    /// and the two apps' sessions stay apart.
    @Test(.needsBubblewrap)
    func aParentAppCannotTakeANestedAppsSessionNames() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("n.bin", size: 1_000)
        let parentID = "dev.ferry.test.Nest", childID = "dev.ferry.test.Nest.Child"
        let parent = try FakeFlatpak(h, id: parentID), child = try FakeFlatpak(h, id: childID)
        for name in [childID, childID + ".Bg"] {   // the control: the parent may name them, and does
            #expect(try parent.call("OpenSession", name, "{'keep-events': <false>}").status == 0)
        }
        let parentsTask = try #require(SandboxTests.taskID(try parent.call("CreateDownload", childID + ".Bg", h.faultURL("n.bin"), "{'paused': <true>}").stdout))
        for name in [childID, childID + ".Bg"] {
            let opened = try child.call("OpenSession", name, "{'keep-events': <false>}")
            #expect(opened.status == 0 && opened.stdout.contains("'\(name)'") && !opened.stdout.contains("["), "OPEN \(opened.stdout) \(opened.stderr)")
        }
        let created = try child.call("CreateDownload", childID + ".Bg", h.faultURL("n.bin"), "{'paused': <true>}")
        let childsTask = try #require(SandboxTests.taskID(created.stdout), "\(created.stdout) \(created.stderr)")
        // Each app sees its own task only, in its own name for the session.
        let childSees = try child.call("GetTask", "\(childsTask)").stdout
        #expect(childSees.contains("'session': <'\(childID).Bg'>"), "\(childSees)")
        #expect(try child.call("GetTask", "\(parentsTask)").stderr.contains("NoSuchTask"))
        #expect(try parent.call("GetTask", "\(childsTask)").stderr.contains("NoSuchTask"))
        let listed = try child.call("ListTasks", childID + ".Bg", "0", "10").stdout
        #expect(listed.contains("uint64 \(childsTask)") && !listed.contains("uint64 \(parentsTask),"), "\(listed)")
        // The user sees two sessions, the child's marked as its.
        let shown = try h.show(childsTask)
        #expect(shown["session"] as? String == "\(childID).Bg [\(childID)]", "\(shown)")
        #expect(try h.show(parentsTask)["session"] as? String == childID + ".Bg")
    }
}
