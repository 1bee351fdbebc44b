import ArgumentParser
import FerryBus
import FerryCore
import Glibc

/// A download's new URL: a fresh signed link for one that expired (`SetURL`).
struct SetURL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-url",
        abstract:
            "Give a download a new URL (a fresh link for one that expired), keeping its bytes if the file is the same.",
        discussion: """
            The next request to the new URL asks for the rest of the file with the old file's validator \
            (If-Range): a server that has the same file sends the rest, one that has another sends it whole \
            and the download starts over. A failed or waiting task is queued again; a paused one stays paused. \
            On another site the task's header fields are dropped.
            """)
    @Argument(help: "Task id.", completion: TaskIDCompletion.relinkable) var id: Int64
    @Argument(help: "The new URL (http or https).") var url: String
    @Flag(help: "Wait until the task ends, showing progress.") var wait = false
    func validate() throws { try TaskIDs.check([id]) }

    func run() throws {
        let agent = try AgentConnection()
        let dropped: Bool
        let held: Int64
        do {
            dropped = try agent.api.setURL(task: id, url: url)
            held = (try? agent.task(id).received) ?? 0
        } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(2)
        }
        let kept =
            held > 0 ? "its \(Output.bytes(held)) are kept if the server has the same file, else it starts over" : ""
        print("task \(id) now fetches \(DownloadURL.printable(url))\(kept.isEmpty ? "" : "; " + kept)")
        if dropped { print("its header fields were dropped: the new URL is on another site") }
        fflush(stdout)
        if wait { try reportingErrors { try Download.waitFor(id, agent: agent) } }
    }
}
