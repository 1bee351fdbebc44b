import ArgumentParser
import CGLib
import FerryBus
import FerryCore
import Glibc

/// `--wait` for several tasks: one line of progress on a terminal ("2 of 5 done · 12.3 MB of
/// 40.0 MB"), each end said as it comes (where a file went, why a task failed), exit 0 only
/// when every file is there.
enum WaitAll {
    static func waitFor(_ ids: [Int64], agent: AgentConnection, quiet: Bool = false) throws {
        let bar = Output.stderrIsTerminal && !quiet
        let loop = g_main_loop_new(nil, 0)
        defer { g_main_loop_unref(loop) }
        let watched = Set(ids)
        var latest: [Int64: TaskInfo] = [:]
        var ended: Set<Int64> = []
        var broken: Error?
        func line() -> String {
            let shown = ids.compactMap { latest[$0] }
            let received = shown.reduce(Int64(0)) { $0 + $1.received }
            let known = shown.allSatisfy { $0.expected != nil }
            let total = known ? shown.reduce(Int64(0)) { $0 + ($1.expected ?? 0) } : nil
            return "\(ended.count) of \(ids.count) done · \(Output.bytes(received))"
                + (total.map { " of \(Output.bytes($0))" } ?? "")
        }
        func look(_ id: Int64) {
            guard !ended.contains(id), broken == nil else { return }
            do {
                let t = try agent.task(id)
                latest[id] = t
                guard t.state.isFinal else { return }
                ended.insert(id)
                if bar { Output.toStderr("\r\u{1B}[K") }
                if t.state == .completed {
                    if !quiet { Output.toStderr("task \(id) saved to \(t.file ?? "?")\n") }
                } else {
                    Output.error("task \(id) \(t.state.rawValue): \(t.error ?? "unknown error")")
                }
            } catch {
                broken = error
            }
        }
        func draw() {
            if bar { Output.toStderr("\r\u{1B}[K" + line()) }
            if ended.count == ids.count || broken != nil { g_main_loop_quit(loop) }
        }
        let subscription = agent.client.subscribe(Agent1.TaskChanged.self) { signal in
            guard watched.contains(signal.task) else { return }
            look(signal.task)
            draw()
        }
        defer { g_dbus_connection_signal_unsubscribe(agent.client.connection, subscription) }
        var timer: UInt32 = 0
        if bar {
            let refresh: () -> Void = {
                for id in ids { look(id) }
                draw()
            }
            timer = g_timeout_add_full(
                G_PRIORITY_DEFAULT, 200,
                { user in
                    Box<() -> Void>.peek(user!)(); return 1
                },
                Box.retained(refresh), Box<() -> Void>.release)
        }
        defer { if timer != 0 { g_source_remove(timer) } }
        let interrupt = Interrupt.sayTheyGoOn(ids, bar: bar)
        defer { g_source_remove(interrupt) }
        for id in ids { look(id) }  // after subscribing: tasks that already ended are seen here
        if ended.count < ids.count && broken == nil { g_main_loop_run(loop) }
        if bar { Output.toStderr("\r\u{1B}[K" + line() + "\n") }
        if let broken { throw broken }
        let failed = ids.filter { latest[$0]?.state != .completed }
        if !failed.isEmpty {
            let names = failed.map(String.init).joined(separator: ", ")
            Output.error("\(failed.count) of \(ids.count) tasks did not complete: \(names)")
            throw ExitCode(1)
        }
    }
}

/// Ctrl-C while `--wait` follows tasks: they go on in the agent (that is what it is for), and
/// the user is told so and how to stop them, instead of a bar line left unfinished.
enum Interrupt {
    /// Installs the SIGINT handler on the default main context; returns its source id.
    static func sayTheyGoOn(_ ids: [Int64], bar: Bool) -> UInt32 {
        let list = ids.map(String.init).joined(separator: " ")
        let message =
            ids.count == 1
            ? "task \(list) goes on in the background; `ferry cancel \(list)` stops it"
            : "tasks \(ids.map(String.init).joined(separator: ", ")) go on in the background; "
                + "`ferry cancel \(list)` stops them"
        let say: () -> Void = {
            Output.toStderr((bar ? "\r\u{1B}[K" : "\n") + "ferry: interrupted: " + message + "\n")
            exit(130)
        }
        // A parent may have left SIGINT blocked (test runners, some launchers): Ctrl-C must work.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        return g_unix_signal_add_full(
            G_PRIORITY_HIGH, SIGINT,
            { user in
                Box<() -> Void>.peek(user!)(); return 0
            },
            Box.retained(say), Box<() -> Void>.release)
    }
}
