import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Runs a request; errors become a message on stderr and the exit status ferry(1) tables: 2
/// for a request refused (a bad URL, value or task id: the agent's or ferry's refusal), 1 when
/// the agent could not do it (it could not be reached, its store failed).
func reportingErrors(_ body: () throws -> Void) throws {
    do { try body() } catch let e as FerryError {
        Output.error(e.message)
        throw ExitCode(e.kind == .failed || e.kind == .storeUnavailable ? 1 : 2)
    } catch let r as Refusal {
        Output.error(r.message)
        throw ExitCode(2)
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List tasks.")
    @Flag(help: "Print JSON (an array of task objects).") var json = false
    @Option(help: "Only this session's tasks.") var session: String?

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            if json { return try Output.streamJSONArray { emit in try agent.forEachPage(session: session, emit) } }
            print(Output.header)
            try agent.forEachPage(session: session) { page in for t in page { print(Output.line(t)) } }
        }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one task (live figures).")
    @Argument(help: "Task id.", completion: TaskIDCompletion.any) var id: Int64
    @Flag(help: "Print JSON.") var json = false
    func validate() throws { try TaskIDs.check([id]) }

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            let t = try agent.task(id)
            // How the session's app is being relaunched for events (throttled after crashes).
            let relaunch = (try? agent.api.getSession(session: t.session))?.relaunch ?? ""
            if json {
                var object = Output.detailJSON(t)
                object["relaunch"] = JSON(relaunch)
                Output.printJSON(object)
            } else {
                print(Output.detail(t, relaunch: relaunch))
            }
        }
    }
}

/// A task id, or --all (optionally of one session): what pause and resume act on.
struct TaskSelection: ParsableArguments {
    @Argument(help: "Task id.", completion: TaskIDCompletion.selection) var id: Int64?
    @Flag(help: "Every task it applies to.") var all = false
    @Option(help: "With --all: only this session's tasks.") var session: String?

    func validate() throws {
        try TaskIDs.check(id.map { [$0] } ?? [])
        if (id == nil) == !all { throw ValidationError("give a task id or --all") }
        if session != nil && !all { throw ValidationError("--session goes with --all") }
    }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pause a task, or every active one (their bytes are kept).")
    @OptionGroup var tasks: TaskSelection
    func run() throws {
        try reportingErrors {
            let api = try AgentConnection().api
            if let id = tasks.id { return try api.pause(task: id) }
            print("paused \(try api.pauseAll(session: tasks.session ?? "")) task(s)")
        }
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Resume a paused (or failed) task, or every paused one.")
    @OptionGroup var tasks: TaskSelection
    func run() throws {
        try reportingErrors {
            let api = try AgentConnection().api
            if let id = tasks.id { return try api.resume(task: id) }
            print("resumed \(try api.resumeAll(session: tasks.session ?? "")) task(s)")
        }
    }
}

struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Cancel tasks and discard their partial bytes.")
    @Argument(help: "Task ids.", completion: TaskIDCompletion.active) var ids: [Int64]
    func validate() throws { try TaskIDs.check(ids) }
    func run() throws {
        try reportingErrors {
            let api = try AgentConnection().api
            for id in ids { try api.cancel(task: id) }
        }
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove ended tasks from the list (downloaded files stay where they are).")
    @Argument(help: "Task ids.", completion: TaskIDCompletion.ended) var ids: [Int64]
    @Flag(help: "Print JSON: {\"removed\": [ids]}.") var json = false
    func validate() throws { try TaskIDs.check(ids) }
    func run() throws {
        try reportingErrors {
            try AgentConnection().api.removeTasks(ids: ids)
            if json { Output.printJSON(["removed": .array(ids.map { JSON($0) })]) }
        }
    }
}

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove every completed, failed and canceled task from the list (files stay); prints how many.")
    @Option(help: "Only this session's tasks.") var session: String?
    @Flag(help: "Print JSON: {\"removed\": N}.") var json = false
    func run() throws {
        try reportingErrors {
            let n = try AgentConnection().api.clearFinished(session: session ?? "")
            if json { Output.printJSON(["removed": JSON(n)]) } else { print(n) }
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Agent version, task counts by state, store path.")
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try reportingErrors {
            let status = try AgentConnection().api.getStatus()
            var counts: [String: Int] = [:]
            for state in TaskState.allCases { counts[state.rawValue] = status.tasks[state] ?? 0 }
            if json {
                return Output.printJSON([
                    "version": JSON(status.version), "store": JSON(status.store),
                    "tasks": .object(counts.mapValues { JSON($0) }),
                    "running": JSON(status.running), "pid": JSON(status.pid),
                    "badge": JSON(status.badge), "damaged-store": status.damagedStore.map { JSON($0) } ?? .null,
                ])
            }
            print("ferryd \(status.version), store \(status.store)")
            if let aside = status.damagedStore {
                print("  the store was damaged at this start: moved aside to \(aside); paused tasks were read back")
            }
            for state in TaskState.allCases { print("  \(state.rawValue): \(counts[state.rawValue] ?? 0)") }
        }
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Live view of active tasks (Ctrl-C to leave).")
    @Option(help: "Only this session's tasks.") var session: String?
    @Flag(help: "Leave when no task is active.") var exitWhenIdle = false

    func run() throws {
        try reportingErrors {
            let terminal = Output.stdoutIsTerminal
            let live = try LiveTasks(try AgentConnection(), session: session)
            // Redrawn when the agent signals a change (and twice a second while a transfer moves).
            live.follow(every: terminal ? 500 : 2_000) { live in
                let active = live.active
                var screen = terminal ? "\u{1B}[H\u{1B}[2J" : ""
                screen += Output.header + "\n"
                for t in active { screen += Output.line(t, speed: live.speeds[t.id]) + "\n" }
                if active.isEmpty { screen += "(no active transfers)\n" }
                print(screen, terminator: "")
                fflush(stdout)
                return !(exitWhenIdle && active.isEmpty)
            }
        }
    }
}

/// Task ids are positive: a negative or zero one is refused as a usage error (exit 64), never
/// passed on (the bus type is unsigned).
enum TaskIDs {
    static func check(_ ids: [Int64]) throws {
        if let bad = ids.first(where: { $0 <= 0 }) {  // a bad id: refused (exit 2), not a usage error
            Output.error("task ids are positive numbers; \(bad) is not one")
            throw ExitCode(2)
        }
    }
}
