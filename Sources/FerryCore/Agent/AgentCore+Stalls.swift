/// A transfer that moves no byte for its stall time (the agent's `--stall-timeout`, or a
/// session's shorter request timeout) is stopped and counts as a failed attempt, retried from
/// the bytes it kept (`TransferOutcome.stalled`), as curl's own speed check would. One wake at
/// the earliest moment any transfer may have stalled: curl's check wakes every transfer once a
/// second (with 500 running, 500 rounds and 1,400 polls a second).
public struct StallWatch: Sendable, Equatable {
    /// When a byte last moved (µs), or when the attempt began.
    var lastMoved: Int64
    /// How long it may go without one (µs).
    var limit: Int64
    /// Where the attempt began (bytes kept before it).
    var offset: Int64
}

extension AgentCore {
    /// Attaches the task's transfer and watches it for a stall.
    mutating func watchForStall(_ r: TaskRecord, seconds: Int, from offset: Int64) {
        let watch = StallWatch(lastMoved: now, limit: Int64(max(1, seconds)) * 1_000_000, offset: offset)
        tasks.attach(r, stall: watch)
        wake(.stall, noLaterThan: now + watch.limit, due: \.stallDueAt)
    }

    mutating func checkStalls(_ ledger: AgentLedger) {
        wakes.stallDueAt = nil
        let (stalled, next) = tasks.stalls(now: now, defaultLimit: Int64(settings.stallSeconds) * 1_000_000)
        for (id, watch) in stalled { self.stalled(id, watch, ledger) }
        if let next { wake(.stall, noLaterThan: next, due: \.stallDueAt) }
    }

    /// Detaches the transfer (the shell keeps its bytes on disk) and ends the attempt as stalled.
    private mutating func stalled(_ id: Int64, _ watch: StallWatch, _ ledger: AgentLedger) {
        guard let r = tasks.machines[id]?.record else { return }
        let seconds = watch.limit / 1_000_000
        out.append(.stopTransfer(id))
        let outcome = TransferOutcome.stalled(seconds: seconds, bytesThisAttempt: max(0, r.received - watch.offset))
        transferEnded(id, received: r.received, outcome, ledger)
    }
}
