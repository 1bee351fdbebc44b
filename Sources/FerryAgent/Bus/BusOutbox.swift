import FoundationEssentials

/// Sends the agent's D-Bus messages — replies, errors, signals — from a thread of its own, in
/// the order the loop handed them over, each behind the store's sync of the turn that made it
/// (`LogSync`, queued here by the store). A message is built and written to the socket on the
/// thread that sends it (`BusConnection`), and an fdatasync takes 0.1–1 ms: the loop only
/// queues them and goes on, the other core sends and waits. One queue for everything, so a
/// reply still follows the signals of its turn, and nothing leaves before the commit it reveals
/// is on disk. The thread sleeps while the queue is empty (no wake-ups at rest).
final class BusOutbox: @unchecked Sendable {  // `queue` and `sending` are guarded by `condition`
    private let condition = Condition()
    private var queue: [() -> Void] = []
    private var sending = false

    init() {
        startThread(named: "ferry-bus-out") { [unowned self] in run() }
    }

    /// Queues one send (called on the loop).
    func send(_ message: @escaping () -> Void) {
        condition.lock()
        queue.append(message)
        if queue.count == 1 && !sending { condition.broadcast() }
        condition.unlock()
    }

    /// A reply: sent at once, on the caller's thread, when nothing is queued or being sent (a
    /// read's answer then needs no hop to the other thread); otherwise queued behind the rest.
    /// Only the loop queues, so nothing can slip in between the look and the send.
    func reply(_ message: @escaping () -> Void) {
        condition.lock()
        guard queue.isEmpty && !sending else {
            queue.append(message)
            if queue.count == 1 && !sending { condition.broadcast() }
            condition.unlock()
            return
        }
        condition.unlock()
        message()
    }

    /// Returns once everything queued so far is handed to the bus connection (before the agent exits).
    func drain() {
        condition.lock()
        while !queue.isEmpty || sending { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let batch = queue
            queue = []
            sending = true
            condition.unlock()
            for message in batch { message() }
            condition.lock()
            sending = false
            if queue.isEmpty { condition.broadcast() }  // drain() may be waiting
            condition.unlock()
        }
    }
}
