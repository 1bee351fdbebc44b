import ArgumentParser
import FerryBus
import FerryCore

/// The options every new task takes on the command line (download and upload).
struct NewTaskOptions: ParsableArguments {
    @Option(help: "Session to queue the task in (default: the CLI's own session).")
    var session: String?
    @Option(help: "A note stored with the task.")
    var description: String?
    @Option(
        help: ArgumentHelp(
            "Do not start before this time: 23:00 (local; tomorrow if past), 2026-11-25T23:00, ISO 8601 with a zone, "
                + "or Unix seconds.",
            valueName: "time"),
        transform: { Parsed($0, NewTaskOptions.startTime) })
    var startAt: Parsed<Int64>?
    @Option(help: "From 0 to 1 (default 0.5): among queued tasks the higher starts first.")
    var priority: Double?
    @Option(
        help: ArgumentHelp(
            "This task's speed limit in bytes per second, or a size such as 500K or 2M.", valueName: "rate"),
        transform: { Parsed($0, NewTaskOptions.rate) })
    var maxRate: Parsed<Int64>?
    @Option(
        help: "Give up after this many failed attempts in a row (default: retry until the session's timeout, 7 days).")
    var tries: Int?
    @Option(
        help: ArgumentHelp(
            "Give up when a retry would come later than this after queueing: 90s, 30m, 2h, 1d, or seconds.",
            valueName: "duration"),
        transform: { Parsed($0, NewTaskOptions.duration) })
    var timeout: Parsed<Int>?
    @Flag(help: "Print the task as JSON (as `ferry show --json`) instead of its id; with --wait, as it ended.")
    var json = false
    @Flag(help: "Wait until the task ends (progress bar on a terminal); exit 0 on success.")
    var wait = false
    @Flag(name: [.customShort("q"), .long], help: "With --wait: no progress and no 'saved to' (failures still said).")
    var quiet = false

    static func startTime(_ text: String) throws -> Int64 {
        guard let at = StartTime.parse(text) else {
            throw Refusal(
                "--start-at '\(text)': not a time (23:00, 2026-11-25T23:00, 2026-11-25T23:00:00Z or Unix seconds)")
        }
        return at
    }

    static func rate(_ text: String) throws -> Int64 {
        guard let n = SizeText.bytes(text) else {
            throw Refusal("--max-rate '\(text)': not a rate (bytes per second, or 500K, 2M)")
        }
        return n
    }

    static func duration(_ text: String) throws -> Int {
        let t = text.trimmingSpaces.lowercased()
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let scale = t.last.flatMap { units[$0] } ?? 1
        let number = units[t.last ?? " "] == nil ? t : String(t.dropLast())
        guard let n = Double(number), n > 0, n * Double(scale) < Double(UInt32.max) else {
            throw Refusal("--timeout '\(text)': not a duration (90s, 30m, 2h, 1d, or seconds)")
        }
        return Int((n * Double(scale)).rounded(.up))
    }

    /// A value ferry cannot take is a refused request (exit 2, as ferry(1) says), not a usage error.
    func validate() throws {
        var problems = [startAt?.problem, maxRate?.problem, timeout?.problem].compactMap { $0 }
        if let tries, tries < 1 { problems.append("--tries \(tries): must be at least 1") }
        if let priority, !(0...1).contains(priority) { problems.append("--priority \(priority): must be from 0 to 1") }
        guard let first = problems.first else { return }
        Output.error(first)
        throw ExitCode(2)
    }

    /// After the task was made: waits for it (--wait) and prints it (--json), also when it failed.
    func follow(_ id: Int64, agent: AgentConnection) throws {
        defer { if json, let t = try? agent.task(id) { Output.printJSON(Output.detailJSON(t)) } }
        if wait { try Download.waitFor(id, agent: agent, quiet: quiet) }
    }

    /// After several tasks were made: waits for them all (--wait) and prints them (--json, an array).
    func follow(_ ids: [Int64], agent: AgentConnection) throws {
        defer {
            if json {
                let shown = ids.compactMap { try? agent.task($0) }.map { JSON.object(Output.detailJSON($0)) }
                Output.printJSON(.array(shown))
            }
        }
        if wait { try WaitAll.waitFor(ids, agent: agent, quiet: quiet) }
    }

    /// The task options these give.
    var options: TaskOptions {
        var o = TaskOptions()
        o.description = description
        o.earliestBegin = startAt?.value
        o.priority = priority
        o.maxRate = maxRate?.value
        o.maxAttempts = tries
        o.timeout = timeout?.value
        return o
    }
}

/// An option's value as ferry read it, or why it cannot be one: refused in `validate()` with
/// exit status 2. (A transform that throws makes ArgumentParser exit 64, its usage error.)
enum Parsed<T> {
    case value(T)
    case bad(String)

    init(_ text: String, _ parse: (String) throws -> T) {
        do { self = .value(try parse(text)) } catch let r as Refusal { self = .bad(r.message) } catch {
            self = .bad("'\(text)': \(error)")
        }
    }

    var value: T? { if case .value(let v) = self { v } else { nil } }
    var problem: String? { if case .bad(let why) = self { why } else { nil } }
}
