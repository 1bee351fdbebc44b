/// A transfer that moves no byte for its stall time (the agent's `--stall-timeout`, or a
/// session's shorter request timeout) is stopped and counts as a failed attempt, retried from
/// the bytes it kept, as curl's own speed check would (CURLE_OPERATION_TIMEDOUT). One wake at
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
    mutating func watchForStall(_ id: Int64, seconds: Int, from offset: Int64) {
        let watch = StallWatch(lastMoved: now, limit: Int64(max(1, seconds)) * 1_000_000, offset: offset)
        stallWatches[id] = watch
        wake(.stall, noLaterThan: now + watch.limit, dueAt: \.stallArmedAt)
    }

    mutating func checkStalls(_ ledger: AgentLedger) {
        stallArmedAt = nil
        var next: Int64?
        for id in attached.sorted() {
            // A watch lost with a turn that could not commit starts again from now.
            let watch = stallWatches[id] ?? StallWatch(lastMoved: now, limit: Int64(settings.stallSeconds) * 1_000_000,
                                                       offset: machines[id]?.record.received ?? 0)
            stallWatches[id] = watch
            if now - watch.lastMoved >= watch.limit {
                stalled(id, watch, ledger)
            } else {
                next = min(next ?? .max, watch.lastMoved + watch.limit)
            }
        }
        if let next { wake(.stall, noLaterThan: next, dueAt: \.stallArmedAt) }
    }

    /// Detaches the transfer (the shell keeps its bytes on disk) and ends the attempt as curl
    /// would have ended it.
    private mutating func stalled(_ id: Int64, _ watch: StallWatch, _ ledger: AgentLedger) {
        guard let r = machines[id]?.record else { return }
        let seconds = watch.limit / 1_000_000
        out.append(.stopTransfer(id))
        let outcome = TransferOutcome(curlCode: 28, curlMessage: "no data for \(seconds) s: the transfer stalled",
                                      httpStatus: 0, bytesThisAttempt: max(0, r.received - watch.offset))
        transferEnded(id, received: r.received, outcome, ledger)
    }
}
