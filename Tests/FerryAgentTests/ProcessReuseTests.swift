import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// A sandboxed process that forks, lets the parent exit and keeps the connection, with a host
/// process taking the parent's pid: the bus still names that pid as the connection's, and the
/// agent must not take the newcomer for the caller (issue 31, item 2).
@Suite(.serialized) struct ProcessReuseTests {
    static let lastPID = "/proc/sys/kernel/ns_last_pid"

    /// The app's held connection, and the fifo it takes its commands from.
    struct HeldConnection {
        let h: Harness
        let fifo: String
        let output: String
        let pid: Int32
        /// Its unique bus name (":1.3").
        let name: String

        init(_ h: Harness, in app: FakeFlatpak) throws {
            self.h = h
            let script = app.home + "/held-connection.py"
            try? FileManager.default.removeItem(atPath: script)
            try FileManager.default.copyItem(atPath: Harness.packageRoot + "/Tests/Support/held-connection.py", toPath: script)
            fifo = app.home + "/commands"
            unlink(fifo)
            guard mkfifo(fifo, 0o600) == 0 else { throw FerryError(.failed, "mkfifo \(fifo)") }
            output = h.root + "/held.out"
            _ = try app.spawn(["/usr/bin/python3", script, fifo], output: output)
            let out = output
            var line = ""
            try h.eventually("the app's connection") {
                line = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
                return line.hasSuffix("\n")
            }
            pid = try #require(Int32(line.split(separator: " ").last?.filter(\.isNumber) ?? ""), "\(line)")
            name = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        }

        /// Waits until the agent has identified this connection (as it does when one joins),
        /// so a loaded machine cannot let the parent exit first (the agent then refuses it).
        func identifiedByTheAgent() throws {
            try h.eventually("the agent identified \(name)") { h.agentLog.contains("connection \(name) joined: identified") }
        }

        /// Writes a command to the app's fifo. Opened without blocking (ENXIO while no reader
        /// has it open): an app that died fails the test by timing out instead of hanging it.
        func send(_ command: String) throws {
            var fd: Int32 = -1
            try h.eventually("the app reading its commands (\(printed))") {
                fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                return fd >= 0
            }
            defer { close(fd) }
            let line = Array((command + "\n").utf8)
            #expect(write(fd, line, line.count) == line.count)
        }

        var printed: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

        /// The parent goes; the child keeps the connection. Returns the child's pid.
        @discardableResult
        func fork() throws -> Int32 {
            try send("fork")
            try h.eventually("the parent gone") { printed.contains("child ") && kill(pid, 0) != 0 }
            let line = printed.split(separator: "\n").first { $0.hasPrefix("child ") } ?? ""
            return Int32(line.dropFirst("child ".count)) ?? -1
        }

        /// GetStatus from the child: what the agent answered.
        func call() throws -> String {
            try send("call")
            try h.eventually("the answer") { printed.contains("reply") || printed.contains("error") }
            return printed
        }
    }

    /// Makes a host process take `pid` (Tests/Support/take-pid.py); false if others kept taking it.
    static func hostProcess(taking pid: Int32, _ h: Harness) throws -> Bool {
        let r = try h.run("/usr/bin/python3", [Harness.packageRoot + "/Tests/Support/take-pid.py", "\(pid)"])
        return r.stdout.hasPrefix("took")
    }

    static var canChoosePIDs: Bool { access(lastPID, W_OK) == 0 }

    /// The agent identifies the app's connection when it joins the bus, while its process is
    /// the app's: the host process that takes the pid later changes nothing.
    @Test(.needsBubblewrap, .enabled(if: canChoosePIDs, "needs root to choose the next pid (ns_last_pid)"))
    func aConnectionIsIdentifiedWhenItJoins() throws {
        let h = try Harness()
        try h.startAgent()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let held = try HeldConnection(h, in: app)
        try held.identifiedByTheAgent()
        let child = try held.fork()
        defer { kill(child, SIGKILL) }
        try #require(try Self.hostProcess(taking: held.pid, h), "could not give pid \(held.pid) to a host process")
        defer { kill(held.pid, SIGKILL) }
        let answer = try held.call()
        #expect(answer.contains("reply") && !answer.contains(h.state), "the app got the host's status: \(answer)")
    }

    /// A connection older than the agent is identified at its first call: a process at its pid
    /// that started after the agent began watching cannot be the one that opened it.
    @Test(.needsBubblewrap, .enabled(if: canChoosePIDs, "needs root to choose the next pid (ns_last_pid)"))
    func aProcessNewerThanTheConnectionIsNotTheCaller() throws {
        let h = try Harness()
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let held = try HeldConnection(h, in: app)
        try h.startAgent()
        let child = try held.fork()
        defer { kill(child, SIGKILL) }
        try #require(try Self.hostProcess(taking: held.pid, h), "could not give pid \(held.pid) to a host process")
        defer { kill(held.pid, SIGKILL) }
        let answer = try held.call()
        #expect(answer.contains("error") && answer.contains("AccessDenied") && !answer.contains(h.state), "\(answer)")
    }

    /// The agent's loop is busy (big batches queued before the join: an app can make such a
    /// long turn) while the app's connection joins, hands itself to a child and its process
    /// exits, and a host process takes the pid: the join was seen when it happened (the
    /// agent's join watcher), not when the loop got to it, so the newcomer is not the caller.
    @Test(.needsBubblewrap, .enabled(if: canChoosePIDs, "needs root to choose the next pid (ns_last_pid)"))
    func aJoinSeenWhileTheAgentIsBusyIsStillItsOwn() throws {
        let h = try Harness()
        try h.startAgent()
        let busy = """
            import dbus
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            agent = dbus.Interface(dbus.SessionBus().get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
            agent.OpenSession("dev.ferry.cli", {})
            requests = dbus.Array([("http://127.0.0.1:9/f%d" % i, {"paused": True}) for i in range(40000)], signature="(sa{sv})")
            loop, left = GLib.MainLoop(), [3]
            def answered(*_):
                left[0] -= 1
                if left[0] == 0:
                    print("done", flush=True); loop.quit()
            for _ in range(3):
                agent.CreateDownloads("dev.ferry.cli", requests, reply_handler=answered, error_handler=answered, timeout=300)
            print("sent", flush=True)
            loop.run()
            """
        let busyOut = h.root + "/busy.txt"
        let batches = try h.spawnWaitable("/usr/bin/python3", ["-c", busy], output: busyOut)
        func said(_ word: String) -> Bool { ((try? String(contentsOfFile: busyOut, encoding: .utf8)) ?? "").contains(word) }
        try h.eventually("the batches sent") { said("sent") }
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let held = try HeldConnection(h, in: app)
        let child = try held.fork()
        defer { kill(child, SIGKILL) }
        try #require(try Self.hostProcess(taking: held.pid, h), "could not give pid \(held.pid) to a host process")
        defer { kill(held.pid, SIGKILL) }
        try #require(!said("done"), "the agent was no longer busy when the pid changed hands: the test proves nothing")
        try h.waitForExit(batches, "the batches", timeout: 120)
        let answer = try held.call()
        #expect(!answer.contains(h.state), "a host process that took the app's pid was taken for the caller: \(answer)")
    }
}
