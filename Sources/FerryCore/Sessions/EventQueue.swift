/// One event in a session's queue.
public struct QueuedEvent: Sendable, Equatable {
    public var seq: UInt64
    public var task: Int64
    public var event: SessionEvent
    public init(seq: UInt64, task: Int64, event: SessionEvent) { self.seq = seq; self.task = task; self.event = event }
}

/// A session's ordered, acknowledged event queue. Every event gets the next sequence number
/// and stays until the client acknowledges it. A task's newer progress replaces its older,
/// unfetched-or-not progress (the app only needs the latest figures), so a slow client never
/// makes the queue grow with progress.
public struct EventQueue: Sendable {
    public private(set) var lastSeq: UInt64
    /// Ordered by seq; replaced progress leaves a hole (nil) until compaction.
    private var slots: [QueuedEvent?] = []
    private var live = 0
    private var progressSlot: [Int64: Int] = [:]
    private var head = 0

    public init(lastSeq: UInt64 = 0, restored: [QueuedEvent] = []) {
        self.lastSeq = max(lastSeq, restored.last?.seq ?? 0)
        self.slots = restored
        self.live = restored.count
    }

    public var count: Int { live }

    /// Are events other than progress waiting for the client (what a relaunch is for)?
    public var hasDurable: Bool {
        slots[head...].contains { $0?.event.isDurable == true }
    }

    @discardableResult
    public mutating func append(task: Int64, _ event: SessionEvent) -> QueuedEvent {
        lastSeq += 1
        let q = QueuedEvent(seq: lastSeq, task: task, event: event)
        if event.isProgress {
            if let old = progressSlot[task], old >= head, old < slots.count, slots[old] != nil {
                slots[old] = nil
                live -= 1
            }
            progressSlot[task] = slots.count
        } else {
            progressSlot[task] = nil  // progress after this event must not reorder before it
        }
        slots.append(q)
        live += 1
        return q
    }

    /// Forgets the events after `seq`: the transaction that stored them did not commit. Their
    /// numbers are not given out again (a client may have been told of them).
    public mutating func rollBack(after seq: UInt64) {
        while slots.count > head, let last = slots.last {
            if let e = last {
                guard e.seq > seq else { break }
                live -= 1
            }
            slots.removeLast()
        }
        progressSlot = progressSlot.filter { $0.value < slots.count }
    }

    public func fetch(after seq: UInt64, limit: Int) -> [QueuedEvent] {
        var out: [QueuedEvent] = []
        var i = firstIndex(after: seq)
        while i < slots.count && out.count < limit {
            if let e = slots[i] { out.append(e) }
            i += 1
        }
        return out
    }

    /// Drops events up to `seq`; returns the durable events dropped.
    public mutating func acknowledge(upTo seq: UInt64) -> [QueuedEvent] {
        var dropped: [QueuedEvent] = []
        while head < slots.count {
            if let e = slots[head] {
                guard e.seq <= seq else { break }
                if e.event.isDurable { dropped.append(e) }
                if progressSlot[e.task] == head { progressSlot[e.task] = nil }
                live -= 1
                slots[head] = nil
            }
            head += 1  // holes left by replaced progress are dead: skip them
        }
        compactIfNeeded()
        return dropped
    }

    private func nextSeq(from index: Int) -> UInt64? {
        var i = index
        while i < slots.count { if let e = slots[i] { return e.seq }; i += 1 }
        return nil
    }

    private func firstIndex(after seq: UInt64) -> Int {
        // Binary search over the non-nil seqs (holes take the next live seq's place).
        var lo = head, hi = slots.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let s = slots[mid]?.seq ?? nextSeq(from: mid) ?? UInt64.max
            if s <= seq { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private mutating func compactIfNeeded() {
        guard head > 1024, head * 2 > slots.count else { return }
        slots.removeFirst(head)
        for (task, index) in progressSlot { progressSlot[task] = index - head }
        head = 0
    }
}
