import ArgumentParser
import FerryBus

/// The options every new task takes on the command line (download and upload).
struct NewTaskOptions: ParsableArguments {
    @Option(help: "Session to queue the task in (default: the CLI's own session).")
    var session: String?
    @Option(help: "A note stored with the task.")
    var description: String?
    @Flag(help: "Wait until the task ends (progress bar on a terminal); exit 0 on success.")
    var wait = false

    /// The task options these give.
    var options: TaskOptions {
        var o = TaskOptions()
        o.description = description
        return o
    }
}
