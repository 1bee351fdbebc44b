import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import CGLib
import Glibc

struct Download: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue a download; prints the new task id.",
        discussion: """
            Examples:
              ferry download https://example.org/big.iso --wait
              ferry download https://example.org/a.pdf --dir ~/Papers --sha256 9f86d0…
              ferry download https://example.org/night.iso --start-at 23:00 --priority 0.2
              ferry download https://example.org/x.bin --max-rate 500K --tries 5 --json
            """)

    @Argument(help: "The http or https URLs to download (a task each).")
    var urls: [String] = []
    @Option(
        name: [.customShort("i"), .customLong("input-file")],
        help: ArgumentHelp(
            "Read URLs from a file (- for stdin), one a line: blank lines and # comments skipped; aria2's indented "
                + "out=NAME and dir=FOLDER lines apply to the URL before them.",
            valueName: "file"),
        completion: .file())
    var inputFile: String?
    @Option(
        name: [.customShort("d"), .customShort("P"), .long],
        help: "Folder for the finished file, made (0700) if missing (default: your download folder).",
        completion: .directory)
    var dir: String?
    @Option(
        name: [.customShort("o"), .long],
        help: "Exact path of the finished file (never overwrites: an existing name gets ' (1)').", completion: .file())
    var output: String?
    @Option(help: "Expected SHA-256 of the file, in hex; a mismatch fails the task.")
    var sha256: String?
    @OptionGroup var task: NewTaskOptions

    func validate() throws {
        if dir != nil && output != nil { throw ValidationError("give either --dir or --output, not both") }
        if urls.isEmpty && inputFile == nil { throw ValidationError("give a URL, or --input-file FILE") }
    }

    func run() throws {
        try reportingErrors {
            let entries = try listed()
            guard !entries.isEmpty else { throw Refusal("\(inputFile ?? "the list") has no URL") }
            if entries.count > 1 {
                if output != nil { throw Refusal("--output names one file; with several URLs give --dir") }
                if sha256 != nil { throw Refusal("--sha256 is one file's; with several URLs queue each on its own") }
            }
            let base = try baseOptions()
            let requests = try entries.map { (url: try Self.withScheme($0.url), options: try options(base, for: $0)) }
            let agent = try AgentConnection()
            if requests.count == 1 {
                let (url, options) = requests[0]
                let id = try agent.createTask(session: task.session, printID: !task.json) {
                    try $0.createDownload(session: $1, url: url, options: options)
                }
                return try task.follow(id, agent: agent)
            }
            let ids = try agent.createTasks(session: task.session, printIDs: !task.json) {
                try $0.createDownloads(session: $1, requests: requests)
            }
            try task.follow(ids, agent: agent)
        }
    }

    /// The options every URL shares: the task options, --dir or --output made absolute.
    private func baseOptions() throws -> TaskOptions {
        var options = task.options
        options.directory = dir.map(Self.absolute)
        options.output = output.map(Self.absolute)
        // An --output that names a folder saves inside it, under the server's name (as cp and mv do).
        if let out = options.output, Self.isFolder(out) { (options.directory, options.output) = (out, nil) }
        if let folder = options.directory { try Self.create(folder) }
        options.sha256 = sha256
        return options
    }

    /// A --dir that does not exist yet is made (0700, with its missing parents), as
    /// `curl --create-dirs` and wget do; one that exists keeps its mode.
    /// A refusal names the folder and says why as strerror does (exit 2, as the agent's refusals).
    static func create(_ folder: String) throws {
        var path = ""
        for part in folder.split(separator: "/") {
            path += "/" + part
            if mkdir(path, 0o700) == 0 || errno == EEXIST && isFolder(path) { continue }
            let why = errno == EEXIST ? "it is not a folder" : String(cString: strerror(errno))
            Output.error("cannot create the folder \(folder): \(path == folder ? "" : path + ": ")\(why)")
            throw ExitCode(2)
        }
    }

    static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Follows one task until it ends, woken by the agent's TaskChanged signal (and, on a
    /// terminal, a redraw timer for the progress bar). Exit 0 when complete, 1 otherwise.
    static func waitFor(_ id: Int64, agent: AgentConnection, quiet: Bool = false) throws {
        let bar = Output.stderrIsTerminal && !quiet
        let loop = g_main_loop_new(nil, 0)
        defer { g_main_loop_unref(loop) }
        var outcome: Result<Void, Error>?
        var lastReason: WaitReason?
        var speed = TransferSpeed()
        func check() {
            do {
                let t = try agent.task(id)
                if bar {
                    speed.sample(received: t.received, at: Int64(g_get_monotonic_time()))
                    Output.toStderr("\r\u{1B}[K\(progressBar(t, speed: t.state == .running ? speed : nil))")
                } else if t.state == .waiting, t.reason != lastReason, let r = t.reason {
                    Output.error("task \(id) waiting (\(r.rawValue)): \(t.error ?? "")")
                }
                lastReason = t.reason
                switch t.state {
                case .completed:
                    outcome = .success(())
                    // Where it went (it may be "name (1).ext"): on stderr, so stdout stays the task id.
                    if let file = t.file, t.kind == .download {
                        if bar { Output.toStderr("\n") }
                        if !quiet { Output.toStderr("saved to \(file)\n") }
                        g_main_loop_quit(loop)
                        return
                    }
                case .failed, .canceled:
                    if bar { Output.toStderr("\n") }
                    Output.error("task \(id) \(t.state.rawValue): \(t.error ?? "unknown error")")
                    outcome = .failure(ExitCode(1))
                default: return
                }
                if bar, case .success = outcome { Output.toStderr("\n") }
            } catch {
                outcome = .failure(error)
            }
            g_main_loop_quit(loop)
        }
        let subscription = agent.client.subscribe(Agent1.TaskChanged.self) { signal in
            if signal.task == id { check() }
        }
        defer { g_dbus_connection_signal_unsubscribe(agent.client.connection, subscription) }
        var timer: UInt32 = 0
        if bar {
            timer = g_timeout_add_full(
                G_PRIORITY_DEFAULT, 200,
                { user in
                    Box<() -> Void>.peek(user!)(); return 1
                },
                Box.retained(check), Box<() -> Void>.release)
        }
        defer { if timer != 0 { g_source_remove(timer) } }
        let interrupt = Interrupt.sayTheyGoOn([id], bar: bar)
        defer { g_source_remove(interrupt) }
        check()  // after subscribing: a task that already ended is seen here
        if outcome == nil { g_main_loop_run(loop) }
        try outcome?.get()
    }

    /// "[#####     ] 3.2 MB/10 MB (32%) 1.1 MB/s, 6 s left".
    static func progressBar(_ t: TaskInfo, speed: TransferSpeed? = nil) -> String {
        let width = 30
        var rate = ""
        if let s = speed?.bytesPerSecond, s > 0 {
            rate = " \(ByteSize.speed(Int64(s)))"
            if let left = speed?.secondsLeft(received: t.received, expected: t.expected) {
                rate += ", \(TransferSpeed.duration(left)) left"
            }
        }
        guard let e = t.expected, e > 0 else { return "\(Output.stateText(t)) \(Output.bytes(t.received))" + rate }
        let filled = min(width, Int(Double(t.received) / Double(e) * Double(width)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
            + Output.progress(t) + (t.state == .running ? rate : " " + Output.stateText(t))
    }
}
