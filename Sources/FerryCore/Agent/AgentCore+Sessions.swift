/// Sessions as apps see them: their event queues, who is connected, relaunching the app for its
/// events, invalidation.
extension AgentCore {
    /// A session's configuration (defaults for one the store does not know).
    func config(_ session: String) -> SessionConfig { sessions.config(session) }

    // MARK: - Events

    /// Queues an event for the session's client and stores it (in the turn's transaction).
    mutating func append(session: String, task: Int64, _ event: SessionEvent) {
        guard config(session).keepEvents else { return }
        touchQueue(session)
        out += sessions.append(session: session, task: task, event)
        wake(.signals)
    }

    /// One EventsAvailable per session per burst; then whether its app is needed.
    mutating func flushSignals(_ ledger: AgentLedger) {
        let pending = sessions.signalsPending
        sessions.signalsPending = []
        for s in pending {
            out.append(.eventsAvailable(session: s, latest: sessions.queues[s]?.lastSeq ?? 0, app: app(ofSession: s)))
            considerLaunch(s)
            checkInvalidation(s, ledger)
        }
    }

    mutating func fetchEvents(_ session: String, after: UInt64, limit: Int, _ ledger: AgentLedger) throws -> AgentReply {
        guard let q = sessions.queues[session] else { throw SessionBook.noSuchSession(session) }
        let events = q.fetch(after: after, limit: AgentRequest.pageSize(limit))
        var blobs: [Int64: ResumeData] = [:]
        for e in events {
            guard case .completed(_, _, true) = e.event, let r = try? ledger.task(e.task), r.kind == .download,
                  r.state == .failed || r.state == .canceled else { continue }
            let staged = ledger.stagedBytes(e.task)
            if staged > 0 { blobs[e.task] = Self.resumeBlob(r, staged: staged) }
        }
        return .events(events, resumeData: blobs)
    }

    mutating func acknowledgeEvents(_ session: String, upTo seq: UInt64) throws {
        out += try sessions.acknowledge(session, upTo: seq, confined: !config(session).app.isEmpty)
    }

    // MARK: - Connected clients and relaunch

    mutating func peerLeft(_ peer: String) {
        for session in sessions.peerLeft(peer) { considerLaunch(session) }
    }

    /// Starts the session's app if events wait for it and nobody is there to take them.
    mutating func considerLaunch(_ session: String) {
        switch sessions.considerLaunch(session, now: now) {
        case .none: break
        case .wait(let until): wake(.relaunch(session), at: until)
        case .launch(let target): out.append(.launch(session: session, target))
        }
    }

    mutating func appLaunched(_ session: String, pid: Int32) {
        log(.info, "session \(session): launched \(config(session).launchTarget?.name ?? "?")\(pid > 0 ? " (pid \(pid))" : "") for its events")
    }

    mutating func appLaunchFailed(_ session: String, _ message: String) {
        log(.error, "session \(session): \(message)")
        _ = sessions.appExited(session, now: now, failedToStart: true)
        considerLaunch(session)   // arms the backoff wake
    }

    mutating func appExited(_ session: String, status: Int32) {
        if let note = sessions.appExited(session, now: now) {
            log(.warning, "session \(session): launched app exited (status \(status)) with events pending: \(note)")
        } else {
            log(.info, "session \(session): launched app exited (status \(status))")
        }
        considerLaunch(session)
    }

    mutating func finishedHandlingEvents(_ session: String, _ ledger: AgentLedger) throws {
        guard try ledger.session(session) != nil else { throw SessionBook.noSuchSession(session) }
        sessions.relaunch[session, default: RelaunchPolicy()].finishedEvents(now: now)
        out.append(.store(.finishedEvents(session: session, at: now)))
        log(.info, "session \(session): the app finished handling its events")
    }

    func sessionInfo(_ session: String, _ ledger: AgentLedger) throws -> SessionInfo {
        guard let c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        return SessionInfo(identifier: session, configuration: c, clients: sessions.clients[session]?.count ?? 0,
                           pendingEvents: sessions.queues[session]?.count ?? 0, latestSeq: sessions.queues[session]?.lastSeq ?? 0,
                           relaunch: sessions.relaunch[session]?.describe(now: now) ?? "",
                           finishedEvents: try ledger.finishedEvents(session: session))
    }

    // MARK: - Invalidation

    mutating func invalidateSession(_ session: String, cancelTasks: Bool, _ ledger: AgentLedger) throws {
        guard var c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        guard !c.invalid, !c.invalidating else { return }
        c.invalidating = true
        credentials.forSession[session] = nil   // an app's "for-session" answers end here
        out.append(.store(.saveSession(session, c)))
        sessions.configs[session] = c
        var unfinished = try ledger.unfinishedTaskIDs(session: session)
        if cancelTasks {
            for id in unfinished { _ = try? withMachine(id, ledger) { m, now in try m.cancel(keepPartial: false, now: now) } }
            unfinished = []
        }
        checkInvalidation(session, unfinished: unfinished)
    }

    /// An invalidating session with no unfinished task gets its last event.
    mutating func checkInvalidation(_ session: String, _ ledger: AgentLedger) {
        guard sessions.configs[session]?.invalidating == true, let ids = try? ledger.unfinishedTaskIDs(session: session) else { return }
        // The store may still show tasks this turn ended: memory knows better.
        checkInvalidation(session, unfinished: ids.filter { tasks.machines[$0].map { !$0.record.state.isFinal } ?? true })
    }

    private mutating func checkInvalidation(_ session: String, unfinished: [Int64]) {
        guard var c = sessions.configs[session], c.invalidating, unfinished.isEmpty else { return }
        c.invalidating = false
        c.invalid = true
        // The session's new state and its last event commit together.
        out.append(.store(.saveSession(session, c)))
        sessions.configs[session] = c
        if c.cookies { out.append(.forgetCookies(settings.state.cookieJar(session))) }
        append(session: session, task: 0, .invalidated(error: nil))
    }
}
