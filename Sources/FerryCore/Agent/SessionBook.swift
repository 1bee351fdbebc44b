/// The sessions apps opened: their configurations (mirroring the store), their event queues,
/// who is connected to each, and when to relaunch an app for its events.
struct SessionBook: Sendable {
    /// Every session's configuration, as the store has it.
    var configs: [String: SessionConfig] = [:]
    /// Bus peers that opened each session and are still on the bus.
    var clients: [String: Set<String>] = [:]
    var relaunch: [String: RelaunchPolicy] = [:]
    var queues: [String: EventQueue] = [:]
    /// Sequence numbers reserved in the store per session (see `append`).
    var reservedSeq: [String: UInt64] = [:]
    /// Sessions with new events since the last EventsAvailable.
    var signalsPending: [String] = []

    /// A session's configuration (defaults for one the store does not know).
    func config(_ session: String) -> SessionConfig { configs[session] ?? SessionConfig() }

    /// The sandboxed app a session belongs to ("" for the host's).
    func app(_ session: String) -> String { configs[session]?.app ?? "" }

    /// Queues an event for the session's client; the store writes it takes (none for a session
    /// that keeps no events). EventsAvailable follows on the signals wake.
    mutating func append(session: String, task: Int64, _ event: SessionEvent) -> [AgentEffect] {
        guard config(session).keepEvents else { return [] }
        var out: [AgentEffect] = []
        // Appended in place: copying the queue out and back would copy it whole for every event.
        let e = queues[session, default: EventQueue()].append(task: task, event)
        if event.isDurable { out.append(.store(.appendEvent(session: session, e))) }
        // Progress is not stored, but its numbers must never be reused after a restart:
        // reserve them in blocks so a restarted agent continues above anything a client saw.
        if e.seq > reservedSeq[session] ?? 0 {
            let reserve = e.seq + 1_000
            out.append(.store(.reserveSeq(session: session, reserve)))
            reservedSeq[session] = reserve
        }
        if !signalsPending.contains(session) { signalsPending.append(session) }
        return out
    }

    /// Drops every event up to `seq`; the store write it takes, if any.
    /// `confined`: the session is a sandboxed app's (its inbox is the app's folder).
    mutating func acknowledge(_ session: String, upTo seq: UInt64, confined: Bool) throws -> [AgentEffect] {
        guard let q = queues[session] else { throw Self.noSuchSession(session) }
        guard seq <= q.lastSeq else {
            throw FerryError(.invalidArgument, "cannot acknowledge event \(seq): the latest is \(q.lastSeq)")
        }
        let dropped = queues[session]!.acknowledge(upTo: seq)
        guard !dropped.isEmpty else { return [] }
        // An upload's reply was the event's to hand over: handed, it goes (after the commit).
        let replies = dropped.compactMap { if case .uploaded(_, let file, _, _, _) = $0.event, !file.isEmpty { file } else { nil } }
        return [.store(.deleteEvents(session: session, upTo: seq))] + (replies.isEmpty ? [] : [.removeFiles(replies, confined: confined)])
    }

    static func noSuchSession(_ session: String) -> FerryError {
        FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
    }

    /// The sessions a peer leaving the bus leaves without any client.
    mutating func peerLeft(_ peer: String) -> [String] {
        var orphaned: [String] = []
        for (session, peers) in clients where peers.contains(peer) {
            clients[session]?.remove(peer)
            if clients[session]?.isEmpty == true {
                clients[session] = nil
                orphaned.append(session)
            }
        }
        return orphaned.sorted()
    }

    enum Launch: Equatable { case none, wait(until: Int64), launch(LaunchTarget) }

    /// Whether to start the session's app now: events wait for it and nobody is there to take them.
    mutating func considerLaunch(_ session: String, now: Int64) -> Launch {
        guard let target = config(session).launchTarget else { return .none }
        let connected = !(clients[session]?.isEmpty ?? true)
        // Runs after every burst of events: scan the queue only when nobody is listening.
        let pending = !connected && (queues[session]?.hasDurable ?? false)
        switch (relaunch[session] ?? RelaunchPolicy()).decide(pendingEvents: pending, clientConnected: connected, now: now) {
        case .none: return .none
        case .wait(let until): return .wait(until: until)
        case .launch:
            relaunch[session, default: RelaunchPolicy()].launched(now: now)
            return .launch(target)
        }
    }

    /// A launched app exited (or could not start); a note for the log when events still wait.
    mutating func appExited(_ session: String, now: Int64, failedToStart: Bool = false) -> String? {
        let pending = failedToStart || (queues[session]?.hasDurable ?? false)
        relaunch[session, default: RelaunchPolicy()].exited(now: now, pendingEvents: pending)
        return failedToStart ? nil : relaunch[session]?.describe(now: now)
    }

    /// Rolls every queue back to its last sequence number in `lastSeq` (a turn that could not
    /// commit: its events are forgotten, their numbers never reused).
    mutating func rollBack(to lastSeq: [String: UInt64]) {
        for (session, seq) in lastSeq { queues[session]?.rollBack(after: seq) }
    }
}
