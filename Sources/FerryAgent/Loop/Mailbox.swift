import CGLib

/// Items one thread posts for another, handed over in batches: everything posted before the
/// receiving thread looks arrives in one dispatch on its GLib context, so a busy receiver gets
/// fewer, larger batches (one thread wake-up and one source a batch, not an item).
final class Mailbox<Item>: @unchecked Sendable {  // `items` is guarded by `lock`
    private let lock = Lock()
    private var items: [Item] = []
    private let context: OpaquePointer
    private let deliver: ([Item]) -> Void

    /// `deliver` runs on the thread of `context` (nil: the agent's loop).
    init(context: OpaquePointer?, deliver: @escaping ([Item]) -> Void) {
        self.context = context ?? g_main_context_default()
        self.deliver = deliver
    }

    func post(_ item: Item) {
        lock.lock()
        items.append(item)
        let first = items.count == 1
        lock.unlock()
        if first { MainLoop.invoke(in: context) { [self] in handOver() } }
    }

    /// Several items, in order, with one look at the lock.
    func post(contentsOf more: [Item]) {
        guard !more.isEmpty else { return }
        lock.lock()
        let first = items.isEmpty
        items.append(contentsOf: more)
        lock.unlock()
        if first { MainLoop.invoke(in: context) { [self] in handOver() } }
    }

    private func handOver() {
        lock.lock()
        let batch = items
        items = []
        lock.unlock()
        deliver(batch)
    }
}
