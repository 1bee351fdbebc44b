import ArgumentParser
import FerryBus
import FerryCore
import FerrySDBus
import FoundationEssentials
import Glibc

/// The CLI's link to the agent: connects to the session bus and makes sure an agent runs
/// (D-Bus activation where installed, else the `ferryd` next to this executable).
struct AgentConnection {
    static let cliSession = BusNames.cliSession
    let client: BusClient

    init() throws {
        client = try BusClient()
        try ensureAgent()
    }

    private func ensureAgent() throws {
        if client.agentIsRunning() { return }
        if client.agentIsActivatable() { return }  // the first call starts it
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let ferryd = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("ferryd").path
        guard access(ferryd, X_OK) == 0 else {
            throw FerryError(
                .failed,
                "the Ferry agent is not running and cannot be started: no D-Bus service file for dev.ferry.Agent1 and "
                    + "no ferryd next to \(exe)"
            )
        }
        try spawnDetached(ferryd)
        // Wait for the agent to own its name (bounded).
        for _ in 0..<500 {
            if client.agentIsRunning() { return }
            usleep(20_000)
        }
        throw FerryError(
            .failed,
            "started \(ferryd) but it did not appear on the session bus within 10 s (see its log in \(Self.logPath))")
    }

    static var logPath: String {
        StateFolder(XDG.stateDirectory).log
    }

    /// Starts the agent in its own session so it outlives this command and its terminal.
    private func spawnDetached(_ path: String) throws {
        let logPath = Self.logPath
        try? FileManager.default.createDirectory(
            atPath: PathName.folder(of: logPath),
            withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The agent keeps its own log under 1 MiB; stderr (a crash's last words) goes there too.
        _ = try ProcessLauncher.spawn([path, "--log-file", logPath], output: logPath)
    }

    /// The agent's API.
    var api: AgentProxy { AgentProxy(client) }

    func openCLISession() throws { _ = try api.perform(AgentCalls.openUserSession) }

    /// Creates a task in `session`, or in the CLI's own session when nil, and prints its id.
    /// A request the agent refuses exits 2 with the reason.
    /// `printID`: false when the caller prints the task as JSON instead.
    func createTask(
        session: String?, printID: Bool = true, _ create: (AgentProxy, String) throws -> Int64
    ) throws -> Int64 {
        if session == nil { try openCLISession() }
        do {
            let id = try create(api, session ?? Self.cliSession)
            if printID {
                print(id)
                fflush(stdout)
            }
            return id
        } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(2)
        }
    }

    /// Several tasks made with one call (all or none), their ids printed a line each.
    func createTasks(
        session: String?, printIDs: Bool = true, _ create: (AgentProxy, String) throws -> [Int64]
    ) throws -> [Int64] {
        if session == nil { try openCLISession() }
        do {
            let ids = try create(api, session ?? Self.cliSession)
            if printIDs {
                for id in ids { print(id) }
                fflush(stdout)
            }
            return ids
        } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(2)
        }
    }

    func task(_ id: Int64) throws -> TaskInfo { try api.getTask(task: id) }

    /// Every task (optionally of one session), a page at a time as the agent sends them, each
    /// with the app that owns it (rows do not carry it: one GetSession per session seen).
    func forEachPage(session: String?, _ body: ([TaskInfo]) throws -> Void) throws {
        var owners: [String: String] = [:]
        let api = api
        // The pages over sd-bus where it connects: a third of the CPU GDBus takes (SDBusCaller).
        let pages = SDBusCaller().map { bus in AgentProxy(client, transport: { try bus.call($0, $1) }) } ?? api
        try pages.forEachPage(session: session) { page in
            var page = page
            for i in page.indices {
                let s = page[i].session
                if owners[s] == nil { owners[s] = (try? api.getSession(session: s))?.configuration.app ?? "" }
                page[i].app = owners[s]!
            }
            try body(page)
            return true
        }
    }

    func allTasks(session: String?) throws -> [TaskInfo] {
        var all: [TaskInfo] = []
        try forEachPage(session: session) { all += $0 }
        return all
    }
}
