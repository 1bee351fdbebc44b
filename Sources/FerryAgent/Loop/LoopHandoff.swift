import Dispatch

/// Results a serial worker queue hands back to the loop in batches: everything posted while
/// the worker still has queued work arrives in one loop callback, instead of one GLib source,
/// one thread wake-up and one loop iteration per result (per small file, when 16 transfers
/// are prepared at once).
final class LoopHandoff<T>: @unchecked Sendable {  // `pending` is touched only on `queue`
    private let queue: DispatchQueue
    private let deliver: ([T]) -> Void
    private var pending: [T] = []

    /// `deliver` runs on the loop.
    init(queue: DispatchQueue, deliver: @escaping ([T]) -> Void) {
        self.queue = queue
        self.deliver = deliver
    }

    /// Call on `queue`.
    func post(_ result: T) {
        pending.append(result)
        guard pending.count == 1 else { return }
        queue.async { [self] in  // after the work already queued: its results join this batch
            let batch = pending
            pending = []
            let deliver = deliver
            MainLoop.idle { deliver(batch) }
        }
    }
}
