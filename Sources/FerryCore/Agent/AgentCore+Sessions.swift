/// Sessions as apps see them: their event queues, who is connected, relaunching the app for its
/// events, invalidation.
extension AgentCore {
    /// A session's configuration (defaults for one the store does not know).
    func config(_ session: String) -> SessionConfig { sessions[session] ?? SessionConfig() }

    // MARK: - Events

    /// Queues an event for the session's client and stores it (in the turn's transaction).
    mutating func append(session: String, task: Int64, _ event: SessionEvent) {
        guard config(session).keepEvents else { return }
        touchQueue(session)
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
        wake(.signals)
    }

    /// One EventsAvailable per session per burst; then whether its app is needed.
    mutating func flushSignals(_ ledger: AgentLedger) {
        let sessions = signalsPending
        signalsPending = []
        for s in sessions {
            out.append(.eventsAvailable(session: s, latest: queues[s]?.lastSeq ?? 0, app: app(ofSession: s)))
            considerLaunch(s)
            checkInvalidation(s, ledger)
        }
    }

    mutating func fetchEvents(_ session: String, after: UInt64, limit: Int, _ ledger: AgentLedger) throws -> AgentReply {
        guard let q = queues[session] else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        let events = q.fetch(after: after, limit: limit == 0 ? 1000 : min(limit, 10_000))
        var blobs: [Int64: [UInt8]] = [:]
        for e in events {
            guard case .completed(_, _, true) = e.event, let r = try? ledger.task(e.task), r.kind == .download,
                  r.state == .failed || r.state == .canceled else { continue }
            let staged = ledger.stagedBytes(e.task)
            if staged > 0 { blobs[e.task] = Self.resumeBlob(r, staged: staged) }
        }
        return .events(events, resumeData: blobs)
    }

    mutating func acknowledgeEvents(_ session: String, upTo seq: UInt64) throws {
        guard queues[session] != nil else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        guard seq <= queues[session]!.lastSeq else {
            throw FerryError(.invalidArgument, "cannot acknowledge event \(seq): the latest is \(queues[session]!.lastSeq)")
        }
        if !queues[session]!.acknowledge(upTo: seq).isEmpty { out.append(.store(.deleteEvents(session: session, upTo: seq))) }
    }

    // MARK: - Connected clients and relaunch

    mutating func peerLeft(_ peer: String) {
        for (session, peers) in clients where peers.contains(peer) {
            clients[session]?.remove(peer)
            if clients[session]?.isEmpty == true {
                clients[session] = nil
                considerLaunch(session)
            }
        }
    }

    /// Starts the session's app if events wait for it and nobody is there to take them.
    mutating func considerLaunch(_ session: String) {
        guard let target = config(session).launchTarget else { return }
        let policy = relaunch[session] ?? RelaunchPolicy()
        let connected = !(clients[session]?.isEmpty ?? true)
        // Runs after every burst of events: scan the queue only when nobody is listening.
        let pending = !connected && (queues[session]?.hasDurable ?? false)
        switch policy.decide(pendingEvents: pending, clientConnected: connected, now: now) {
        case .none:
            break
        case .wait(let until):
            wake(.relaunch(session), at: until)
        case .launch:
            relaunch[session, default: RelaunchPolicy()].launched(now: now)
            out.append(.launch(session: session, target))
        }
    }

    mutating func appLaunched(_ session: String, pid: Int32) {
        log(.info, "session \(session): launched \(config(session).launchTarget?.name ?? "?")\(pid > 0 ? " (pid \(pid))" : "") for its events")
    }

    mutating func appLaunchFailed(_ session: String, _ message: String) {
        log(.error, "session \(session): \(message)")
        relaunch[session, default: RelaunchPolicy()].exited(now: now, pendingEvents: true)
        considerLaunch(session)   // arms the backoff wake
    }

    mutating func appExited(_ session: String, status: Int32) {
        let pending = queues[session]?.hasDurable ?? false
        relaunch[session, default: RelaunchPolicy()].exited(now: now, pendingEvents: pending)
        if let note = relaunch[session]?.describe(now: now) {
            log(.warning, "session \(session): launched app exited (status \(status)) with events pending: \(note)")
        } else {
            log(.info, "session \(session): launched app exited (status \(status))")
        }
        considerLaunch(session)
    }

    mutating func finishedHandlingEvents(_ session: String, _ ledger: AgentLedger) throws {
        guard try ledger.session(session) != nil else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        relaunch[session, default: RelaunchPolicy()].finishedEvents(now: now)
        out.append(.store(.finishedEvents(session: session, at: now)))
        log(.info, "session \(session): the app finished handling its events")
    }

    func sessionInfo(_ session: String, _ ledger: AgentLedger) throws -> SessionInfo {
        guard let c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        return SessionInfo(identifier: session, configuration: c, clients: clients[session]?.count ?? 0,
                           pendingEvents: queues[session]?.count ?? 0, latestSeq: queues[session]?.lastSeq ?? 0,
                           relaunch: relaunch[session]?.describe(now: now) ?? "",
                           finishedEvents: try ledger.finishedEvents(session: session))
    }

    // MARK: - Invalidation

    mutating func invalidateSession(_ session: String, cancelTasks: Bool, _ ledger: AgentLedger) throws {
        guard var c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        guard !c.invalid, !c.invalidating else { return }
        c.invalidating = true
        out.append(.store(.saveSession(session, c)))
        sessions[session] = c
        var unfinished = try ledger.unfinishedTaskIDs(session: session)
        if cancelTasks {
            for id in unfinished { _ = try? withMachine(id, ledger) { m, now in try m.cancel(keepPartial: false, now: now) } }
            unfinished = []
        }
        checkInvalidation(session, unfinished: unfinished)
    }

    /// An invalidating session with no unfinished task gets its last event.
    mutating func checkInvalidation(_ session: String, _ ledger: AgentLedger) {
        guard sessions[session]?.invalidating == true, let ids = try? ledger.unfinishedTaskIDs(session: session) else { return }
        // The store may still show tasks this turn ended: memory knows better.
        checkInvalidation(session, unfinished: ids.filter { machines[$0].map { !$0.record.state.isFinal } ?? true })
    }

    private mutating func checkInvalidation(_ session: String, unfinished: [Int64]) {
        guard var c = sessions[session], c.invalidating, unfinished.isEmpty else { return }
        c.invalidating = false
        c.invalid = true
        // The session's new state and its last event commit together.
        out.append(.store(.saveSession(session, c)))
        sessions[session] = c
        append(session: session, task: 0, .invalidated(error: nil))
    }
}
