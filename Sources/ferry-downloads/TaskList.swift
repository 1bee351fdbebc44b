import CGLib
import FerryBus
import FerryCore

/// What the Downloads window lists: the agent's two sections (active tasks oldest first, then
/// ended ones newest first) laid end to end behind a `PositionModel`. Rows are read a page at a
/// time when GTK first shows them (ListTaskRowsSection), and kept current from the agent's
/// signals: figures of running tasks from TasksProgressed, a task that changes state within its
/// section by fetching that task, anything that moves rows (a new, ended or removed task) by
/// re-reading the counts and the pages on screen. Never the whole list.
final class TaskList {
    struct Row {
        var task: TaskInfo
        /// Bytes per second, while running.
        var speed: Double?
        /// "Active" or "Finished" above a section's first row.
        var header: String?
    }

    let model = PositionModel()
    /// Called after the counts changed (the window shows its empty state at zero).
    var onCountsChanged: () -> Void = {}
    /// The row at a position has new figures or a new state: the window updates its widgets in
    /// place (if that row is shown), so a screen reader's objects and the keyboard's focus stay.
    /// Only a change of the counts (tasks come, go or change section) makes GTK rebuild rows.
    var onRowChanged: (Int) -> Void = { _ in }
    private(set) var activeCount = 0
    private(set) var endedCount = 0

    private let client: BusClient
    private static let pageSize = 50
    private struct PageKey: Hashable { var section: TaskSection; var index: Int }
    private var pages: [PageKey: [TaskInfo]] = [:]
    private var requested: Set<PageKey> = []
    /// Bumped by every reload: pages asked for before it are stale when they arrive.
    private var generation = 0
    private var speeds: [Int64: TransferSpeed] = [:]
    private var changed: [Int64: TaskState] = [:]
    private var removed = false
    private var repliesAsked: Set<Int64> = []
    private var flushArmed = false

    init(client: BusClient) {
        self.client = client
        client.subscribe(Agent1.TaskChanged.self) { [unowned self] signal in
            changed[signal.task] = signal.state
            armFlush()
        }
        client.subscribe(Agent1.TasksRemoved.self) { [unowned self] _ in
            removed = true
            armFlush()
        }
        client.subscribe(Agent1.TasksProgressed.self) { [unowned self] signal in
            progressed(signal.progress.map { ($0.task, $0.received, $0.expected) })
        }
        // Figures lost while the agent restarts come back with a fresh read.
        client.subscribeAgentOwner { [unowned self] _ in reload() }
    }

    /// The row at a position, or nil while its page is on its way (asked for here).
    func row(at position: Int) -> Row? {
        let (section, offset) =
            position < activeCount ? (TaskSection.active, position) : (.ended, position - activeCount)
        let key = PageKey(section: section, index: offset / Self.pageSize)
        guard let page = pages[key] else { request(key); return nil }
        guard offset % Self.pageSize < page.count else { return nil }
        let task = page[offset % Self.pageSize]
        if task.kind == .upload, task.state == .completed, task.replyStatus == nil { askReply(of: task.id) }
        let header = offset == 0 ? (section == .active ? "Active" : "Finished") : nil
        return Row(task: task, speed: task.state == .running ? speeds[task.id]?.bytesPerSecond : nil, header: header)
    }

    /// Reads the counts again and drops every page: GTK rebinds the rows on screen, which asks
    /// for their pages anew.
    func reload() {
        client.send(AgentCalls.getStatus()) { [weak self] result in
            guard let self, case .success(let status) = result else { return }
            generation += 1
            pages = [:]
            requested = []
            let old = model.count
            activeCount = [TaskState.queued, .running, .waiting, .paused].reduce(0) { $0 + (status.tasks[$1] ?? 0) }
            endedCount = [TaskState.completed, .failed, .canceled].reduce(0) { $0 + (status.tasks[$1] ?? 0) }
            model.change(at: 0, removed: old, added: UInt32(activeCount + endedCount))
            onCountsChanged()
        }
    }

    private func request(_ key: PageKey) {
        guard requested.insert(key).inserted else { return }
        let asked = generation
        client.send(
            AgentCalls.listTaskRowsSection(
                session: "", section: key.section, offset: key.index * Self.pageSize,
                limit: Self.pageSize)
        ) { [weak self] result in
            guard let self, asked == generation else { return }
            guard case .success(let rows) = result else { requested.remove(key); return }
            pages[key] = rows
            let start = (key.section == .active ? 0 : activeCount) + key.index * Self.pageSize
            let shown = min(rows.count, Int(model.count) - start)
            for position in start..<start + max(0, shown) { onRowChanged(position) }
        }
    }

    /// A finished upload's reply (status, file) is not in a page's rows (ListTaskRows keeps to
    /// what every row shows): read with GetTask once, when its row is first shown.
    private func askReply(of id: Int64) {
        guard repliesAsked.insert(id).inserted else { return }
        client.send(AgentCalls.getTask(task: id)) { [weak self] result in
            guard let self, case .success(let task) = result, let at = locate(id) else { return }
            pages[at.key]![at.index] = task
            onRowChanged(at.position)
        }
    }

    /// Where a loaded task sits: its page and the position on screen.
    private func locate(_ id: Int64) -> (key: PageKey, index: Int, position: Int)? {
        for (key, page) in pages {
            guard let i = page.firstIndex(where: { $0.id == id }) else { continue }
            return (key, i, (key.section == .active ? 0 : activeCount) + key.index * Self.pageSize + i)
        }
        return nil
    }

    private func progressed(_ moved: [(Int64, Int64, Int64)]) {
        let now = Int64(g_get_monotonic_time())
        for (id, received, expected) in moved {
            speeds[id, default: TransferSpeed()].sample(received: received, at: now)
            guard let at = locate(id) else { continue }
            pages[at.key]![at.index].received = received
            pages[at.key]![at.index].expected = expected < 0 ? nil : expected
            onRowChanged(at.position)
        }
    }

    /// Signals come in bursts (a batch finishing): handle them together, a moment later.
    private func armFlush() {
        guard !flushArmed else { return }
        flushArmed = true
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, 150,
            { user in
                Box<TaskList>.peek(user!).flush()
                return 0
            }, Box.retained(self), Box<TaskList>.release)
    }

    private func flush() {
        flushArmed = false
        let changes = changed
        changed = [:]
        let rowsMove =
            removed
            || changes.contains { id, state in
                guard let at = locate(id) else { return true }  // new, or not on screen: counts may change
                return (at.key.section == .active) == state.isFinal
            }
        removed = false
        if rowsMove { reload(); return }
        for id in changes.keys {
            client.send(AgentCalls.getTask(task: id)) { [weak self] result in
                guard let self, case .success(let task) = result, let at = locate(id) else { return }
                pages[at.key]![at.index] = task
                onRowChanged(at.position)
            }
        }
        for id in speeds.keys where changes[id] != nil && changes[id] != .running { speeds[id] = nil }
    }
}
