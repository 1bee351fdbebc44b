import ArgumentParser
import FerryBus
import FerryCore
import Foundation
import Glibc

/// The CLI's link to the agent: connects to the session bus and makes sure an agent runs
/// (D-Bus activation where installed, else the `ferryd` next to this executable).
struct AgentConnection {
    static let cliSession = "dev.ferry.cli"
    let client: BusClient

    init() throws {
        client = try BusClient()
        try ensureAgent()
    }

    private func ensureAgent() throws {
        if client.agentIsRunning() { return }
        if client.agentIsActivatable() { return }   // the first call starts it
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let ferryd = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("ferryd").path
        guard access(ferryd, X_OK) == 0 else {
            throw FerryError(.failed, "the Ferry agent is not running and cannot be started: no D-Bus service file for dev.ferry.Agent1 and no ferryd next to \(exe)")
        }
        try spawnDetached(ferryd)
        // Wait for the agent to own its name (bounded).
        for _ in 0..<500 {
            if client.agentIsRunning() { return }
            usleep(20_000)
        }
        throw FerryError(.failed, "started \(ferryd) but it did not appear on the session bus within 10 s (see its log in \(Self.logPath))")
    }

    static var logPath: String {
        StateDirectory.path + "/ferryd.log"
    }

    /// Starts the agent in its own session so it outlives this command and its terminal.
    private func spawnDetached(_ path: String) throws {
        let logPath = Self.logPath
        try? FileManager.default.createDirectory(atPath: (logPath as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The agent must not inherit our descriptors (a caller's pipe would never see EOF).
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            for case let fd? in fds.map({ Int32($0) }) where fd > 2 {
                let flags = fcntl(fd, F_GETFD)
                if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            }
        }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setflags(&attr, 0x80)   // POSIX_SPAWN_SETSID (glibc, _GNU_SOURCE only)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        defer { for a in argv { free(a) } }
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, environ)
        guard rc == 0 else { throw FerryError(.failed, "cannot start \(path): \(String(cString: strerror(rc)))") }
    }

    /// The agent's API.
    var api: AgentProxy { AgentProxy(client) }

    func openCLISession() throws {
        var options = SessionOptions()
        options.keepEvents = false
        try api.openSession(Self.cliSession, options)
    }

    /// Creates a task in `session`, or in the CLI's own session when nil, and prints its id.
    /// A request the agent refuses exits 2 with the reason.
    func createTask(session: String?, _ create: (AgentProxy, String) throws -> Int64) throws -> Int64 {
        if session == nil { try openCLISession() }
        do {
            let id = try create(api, session ?? Self.cliSession)
            print(id)
            fflush(stdout)
            return id
        } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(2)
        }
    }

    func task(_ id: Int64) throws -> TaskInfo { try api.task(id) }

    /// Every task (optionally of one session), a page at a time as the agent sends them.
    func forEachPage(session: String?, _ body: ([TaskInfo]) throws -> Void) throws {
        try api.forEachPage(session: session) { try body($0); return true }
    }

    func allTasks(session: String?) throws -> [TaskInfo] { try api.allTasks(session: session) }
}
