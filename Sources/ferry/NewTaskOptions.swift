import ArgumentParser
import FerryBus

/// The options every new task takes on the command line (download and upload).
struct NewTaskOptions: ParsableArguments {
    @Option(help: "Session to queue the task in (default: the CLI's own session).")
    var session: String?
    @Option(help: "A note stored with the task.")
    var description: String?
    @Option(help: ArgumentHelp("Do not start before this time: 23:00 (local; tomorrow if past), 2026-11-25T23:00, ISO 8601 with a zone, or Unix seconds.",
                               valueName: "time"),
            transform: NewTaskOptions.startTime)
    var startAt: Int64?
    @Flag(help: "Wait until the task ends (progress bar on a terminal); exit 0 on success.")
    var wait = false

    static func startTime(_ text: String) throws -> Int64 {
        guard let at = StartTime.parse(text) else {
            throw ValidationError("--start-at '\(text)': not a time (23:00, 2026-11-25T23:00, 2026-11-25T23:00:00Z or Unix seconds)")
        }
        return at
    }

    /// The task options these give.
    var options: TaskOptions {
        var o = TaskOptions()
        o.description = description
        o.earliestBegin = startAt
        return o
    }
}
