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
            emit(sessions.considerLaunch(s, now: now))
            checkInvalidation(s, ledger)
        }
    }

    mutating func acknowledgeEvents(_ session: String, upTo seq: UInt64) throws {
        out += try sessions.acknowledge(session, upTo: seq, confined: !config(session).app.isEmpty)
    }

    // MARK: - Invalidation

    mutating func invalidateSession(_ session: String, cancelTasks: Bool, _ ledger: AgentLedger) throws {
        guard var c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        guard !c.invalid, !c.invalidating else { return }
        c.invalidating = true
        credentials.forSession[session] = nil  // an app's "for-session" answers end here
        out.append(.store(.saveSession(session, c)))
        sessions.configs[session] = c
        var unfinished = try ledger.unfinishedTaskIDs(session: session)
        if cancelTasks {
            for id in unfinished {
                _ = try? withMachine(id, ledger) { m, now in try m.cancel(keepPartial: false, now: now) }
            }
            unfinished = []
        }
        checkInvalidation(session, unfinished: unfinished)
    }

    /// An invalidating session with no unfinished task gets its last event.
    mutating func checkInvalidation(_ session: String, _ ledger: AgentLedger) {
        guard sessions.configs[session]?.invalidating == true, let ids = try? ledger.unfinishedTaskIDs(session: session)
        else { return }
        // The store may still show tasks this turn ended: memory knows better.
        checkInvalidation(
            session, unfinished: ids.filter { tasks.machines[$0].map { !$0.record.state.isFinal } ?? true })
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
