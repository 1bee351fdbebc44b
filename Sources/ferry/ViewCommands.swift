import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your downloads: active transfers, then finished files newest first. Resets the badge.")
    @Flag(help: "Keep the view live on a terminal.") var watch = false
    @Flag(help: "The text view even when a graphical display is there.") var terminal = false

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            if !terminal && !watch, DownloadsWindowLauncher.displayAvailable,
                let window = DownloadsWindowLauncher.executable
            {
                if DisplayProbe.reachable {
                    DownloadsWindowLauncher.exec(window)  // returns only if the exec failed: the text view follows
                } else {
                    Output.error(
                        "the graphical display ($DISPLAY / $WAYLAND_DISPLAY) cannot be reached; showing the text view")
                }
            }
            try agent.api.resetBadge()
            let live = try LiveTasks(agent, session: nil)
            live.follow(every: 500) { live in
                let tasks = Array(live.tasks.values)
                var screen = watch && Output.stdoutIsTerminal ? "\u{1B}[H\u{1B}[2J" : ""
                let active = live.active
                screen += "Active\n"
                screen +=
                    active.isEmpty
                    ? "  (none)\n" : active.map { "  " + Output.line($0, speed: live.speeds[$0.id]) + "\n" }.joined()
                let finished = tasks.filter { $0.state == .completed }.sorted { $0.updated > $1.updated }
                screen += "Finished\n"
                screen += finished.isEmpty ? "  (none)\n" : finished.map { "  \($0.id)\t\($0.file ?? "")\n" }.joined()
                // As the window shows them: what failed or was canceled, and why.
                let failed = tasks.filter { $0.state == .failed || $0.state == .canceled }.sorted {
                    $0.updated > $1.updated
                }
                if !failed.isEmpty { screen += "Failed\n" + failed.map { "  " + Output.line($0) + "\n" }.joined() }
                print(screen, terminator: "")
                fflush(stdout)
                return watch
            }
        }
    }
}

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open a finished download with its default application (xdg-open). Resets the badge.")
    @Argument(help: "Task id.", completion: TaskIDCompletion.openable) var id: Int64?
    @Flag(help: "Open the most recently finished download.") var latest = false

    func validate() throws {
        try TaskIDs.check(id.map { [$0] } ?? [])
        if (id == nil) == !latest { throw ValidationError("give a task id or --latest") }
    }

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            let task: TaskInfo
            if let id {
                task = try agent.task(id)
            } else {
                guard
                    let newest = try agent.allTasks(session: nil).filter({ $0.state == .completed }).max(by: {
                        $0.updated < $1.updated
                    })
                else {
                    throw FerryError(.noSuchTask, "no finished download yet")
                }
                task = newest
            }
            guard task.state == .completed, let file = task.file else {
                throw FerryError(.invalidState, "task \(task.id) is \(task.state.rawValue), not finished")
            }
            guard access(file, F_OK) == 0 else {
                throw FerryError(.failed, "\(file) is no longer there (moved or deleted)")
            }
            try agent.api.resetBadge()
            let status = try ProcessLauncher.run(["xdg-open", file])
            guard status == 0 else {
                throw FerryError(.failed, "xdg-open could not open \(file) (exit \(status))")
            }
        }
    }
}
