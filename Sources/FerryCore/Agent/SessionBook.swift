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
    /// Each session's last event before the open turn, for the sessions it changed (a turn
    /// that cannot commit rolls their queues back to it: see `carryOver`).
    var lastSeqBeforeTurn: [String: UInt64] = [:]

    /// A session's configuration (defaults for one the store does not know).
    func config(_ session: String) -> SessionConfig { configs[session] ?? SessionConfig() }

    /// The sandboxed app a session belongs to ("" for the host's).
    func app(_ session: String) -> String { configs[session]?.app ?? "" }

    /// Queues an event for the session's client; the store writes it takes (none for a session
    /// that keeps no events). EventsAvailable follows on the signals wake.
    mutating func append(session: String, task: Int64, _ event: SessionEvent) -> [AgentEffect] {
        guard config(session).keepEvents else { return [] }
        if lastSeqBeforeTurn[session] == nil { lastSeqBeforeTurn[session] = queues[session]?.lastSeq ?? 0 }
        var out: [AgentEffect] = [.wake(.signals, at: nil)]
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
        let replies = dropped.compactMap {
            if case .uploaded(_, let file, _, _, _) = $0.event, !file.isEmpty { file } else { nil }
        }
        return [.store(.deleteEvents(session: session, upTo: seq))]
            + (replies.isEmpty ? [] : [.removeFiles(replies, confined: confined)])
    }

    static func noSuchSession(_ session: String) -> FerryError {
        FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
    }

    /// The sessions a peer leaving the bus leaves without any client.
    private mutating func orphaned(by peer: String) -> [String] {
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

    /// A peer left the bus: the sessions it leaves without a client may need their app.
    mutating func peerLeft(_ peer: String, now: Int64) -> [AgentEffect] {
        orphaned(by: peer).flatMap { considerLaunch($0, now: now) }
    }

    /// Starts the session's app if events wait for it and nobody is there to take them; or
    /// asks to be woken when its backoff ends.
    mutating func considerLaunch(_ session: String, now: Int64) -> [AgentEffect] {
        guard let target = config(session).launchTarget else { return [] }
        let connected = !(clients[session]?.isEmpty ?? true)
        // Runs after every burst of events: scan the queue only when nobody is listening.
        let pending = !connected && (queues[session]?.hasDurable ?? false)
        switch (relaunch[session] ?? RelaunchPolicy()).decide(
            pendingEvents: pending, clientConnected: connected, now: now)
        {
        case .none: return []
        case .wait(let until): return [.wake(.relaunch(session), at: until)]
        case .launch:
            relaunch[session, default: RelaunchPolicy()].launched(now: now)
            return [.launch(session: session, target)]
        }
    }

    /// Every session with events may need its app (a restarted agent, after a moment).
    mutating func considerLaunches(now: Int64) -> [AgentEffect] {
        queues.keys.sorted().flatMap { considerLaunch($0, now: now) }
    }

    func appLaunched(_ session: String, pid: Int32) -> [AgentEffect] {
        [
            .log(
                .info,
                "session \(session): launched "
                    + "\(config(session).launchTarget?.name ?? "?")\(pid > 0 ? " (pid \(pid))" : "") for its events"
            )
        ]
    }

    mutating func appLaunchFailed(_ session: String, _ message: String, now: Int64) -> [AgentEffect] {
        relaunch[session, default: RelaunchPolicy()].exited(now: now, pendingEvents: true)
        // arms the backoff wake
        return [.log(.error, "session \(session): \(message)")] + considerLaunch(session, now: now)
    }

    /// A launched app exited: the backoff counts it as failed when events still wait.
    mutating func appExited(_ session: String, status: Int32, now: Int64) -> [AgentEffect] {
        let pending = queues[session]?.hasDurable ?? false
        relaunch[session, default: RelaunchPolicy()].exited(now: now, pendingEvents: pending)
        let log: AgentEffect =
            if let note = relaunch[session]?.describe(now: now) {
                .log(
                    .warning, "session \(session): launched app exited (status \(status)) with events pending: \(note)")
            } else {
                .log(.info, "session \(session): launched app exited (status \(status))")
            }
        return [log] + considerLaunch(session, now: now)
    }

    mutating func finishedHandlingEvents(_ session: String, now: Int64, _ ledger: AgentLedger) throws -> [AgentEffect] {
        guard try ledger.session(session) != nil else { throw Self.noSuchSession(session) }
        relaunch[session, default: RelaunchPolicy()].finishedEvents(now: now)
        return [
            .store(.finishedEvents(session: session, at: now)),
            .log(.info, "session \(session): the app finished handling its events"),
        ]
    }

    func info(_ session: String, now: Int64, _ ledger: AgentLedger) throws -> SessionInfo {
        guard let c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        return SessionInfo(
            identifier: session, configuration: c, clients: clients[session]?.count ?? 0,
            pendingEvents: queues[session]?.count ?? 0, latestSeq: queues[session]?.lastSeq ?? 0,
            relaunch: relaunch[session]?.describe(now: now) ?? "",
            finishedEvents: try ledger.finishedEvents(session: session))
    }

    /// A page of the session's events, with the resume data of the failed or canceled
    /// downloads among them whose bytes are still kept.
    func fetchEvents(_ session: String, after: UInt64, limit: Int, _ ledger: AgentLedger) throws -> FetchedEvents {
        guard let q = queues[session] else { throw Self.noSuchSession(session) }
        let events = q.fetch(after: after, limit: pageSize(limit))
        var blobs: [Int64: ResumeData] = [:]
        for e in events {
            guard case .completed(_, _, true) = e.event, let r = try? ledger.task(e.task), r.kind == .download,
                r.state == .failed || r.state == .canceled
            else { continue }
            let staged = ledger.stagedBytes(e.task)
            if staged > 0 { blobs[e.task] = AgentCore.resumeBlob(r, staged: staged) }
        }
        return FetchedEvents(events: events, resumeData: blobs)
    }

    /// Rolls every queue back to its last sequence number in `lastSeq` (a turn that could not
    /// commit: its events are forgotten, their numbers never reused).
    mutating func rollBack(to lastSeq: [String: UInt64]) {
        for (session, seq) in lastSeq { queues[session]?.rollBack(after: seq) }
    }
}
