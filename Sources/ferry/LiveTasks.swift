import CGLib
import FerryBus
import FerryCore
import Glibc

/// The task list kept current from the agent's signals, for `ferry watch` and `ferry view
/// --watch`: listed once, then each TaskChanged fetches that task only and TasksRemoved drops
/// rows; while something runs, a timer refreshes the running tasks' figures (GetTask each,
/// never the whole list). Runs a GLib main loop on the calling thread until `redraw` says stop.
final class LiveTasks {
    private let api: AgentProxy
    private let session: String?
    private(set) var tasks: [Int64: TaskInfo] = [:]
    /// Running tasks' speeds, from the figures each refresh reads (bytes received or sent).
    private(set) var speeds: [Int64: TransferSpeed] = [:]
    private var dirty = true

    init(_ agent: AgentConnection, session: String?) throws {
        api = agent.api
        self.session = session
        for t in try api.allTasks(session: session) { tasks[t.id] = t }
    }

    var active: [TaskInfo] { tasks.values.filter { !$0.state.isFinal }.sorted { $0.id < $1.id } }

    /// Calls `redraw` now and whenever something changed (at most every `interval` ms);
    /// returns when it answers false.
    func follow(every interval: UInt32, _ redraw: @escaping (LiveTasks) -> Bool) {
        let loop = g_main_loop_new(nil, 0)
        defer { g_main_loop_unref(loop) }
        let client = api.client
        let changed = client.subscribe(Agent1.TaskChanged.self) { [unowned self] signal in refresh(signal.task) }
        let removed = client.subscribe(Agent1.TasksRemoved.self) { [unowned self] signal in
            for id in signal.tasks { tasks[id] = nil }
            dirty = true
        }
        defer {
            g_dbus_connection_signal_unsubscribe(client.connection, changed)
            g_dbus_connection_signal_unsubscribe(client.connection, removed)
        }
        let tick: () -> Bool = { [unowned self] in
            // Live figures of the few that move; every other change comes as a signal.
            for t in active where t.state == .running { refresh(t.id) }
            guard dirty else { return true }
            dirty = false
            if redraw(self) { return true }
            g_main_loop_quit(loop)
            return false
        }
        guard tick() else { return }
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, interval, { user in Box<() -> Bool>.peek(user!)() ? 1 : 0 },
            Box.retained(tick), Box<() -> Bool>.release)
        g_main_loop_run(loop)
    }

    private func refresh(_ id: Int64) {
        if let t = try? api.getTask(task: id) {
            guard session == nil || t.session == session else { return }
            if t.state == .running {
                speeds[id, default: TransferSpeed()].sample(received: t.received, at: Int64(g_get_monotonic_time()))
            } else {
                speeds[id] = nil
            }
            if tasks[id] != t { tasks[id] = t; dirty = true }
        } else if tasks.removeValue(forKey: id) != nil {
            dirty = true
        }
    }
}
