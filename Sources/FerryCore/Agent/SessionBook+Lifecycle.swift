/// A session's life: opened (and owned, for good, by whoever made it), its EventsAvailable
/// and relaunches after a burst of events, invalidated once its last task ended.
extension SessionBook {
    /// OpenSession: the session made or opened again, its configuration saved.
    /// `app`: the sandboxed app opening it (nil: a host program).
    mutating func open(
        _ identifier: String, _ options: SessionOptions, peer: String, app: SandboxedApp?,
        settings: AgentCore.Settings, _ ledger: AgentLedger
    ) throws -> (reply: SessionOpened, effects: [AgentEffect]) {
        // an alias's name
        try AgentCore.validateSessionIdentifier(app.map { SessionKey.name(of: identifier, app: $0.id) } ?? identifier)
        let existing = try ledger.session(identifier)
        var config = options.applied(to: existing ?? SessionConfig())
        var effects: [AgentEffect] = []
        config.invalid = false  // a new life for an invalidated identifier
        // A session that keeps no events (the CLI's) has nobody waiting for its "invalidated"
        // event: opened again, its invalidation ends and its tasks go on in it. Else any host
        // program could shut the user out of `ferry download` for as long as a task is paused.
        if !config.keepEvents { config.invalidating = false }
        if existing == nil {  // the owner is whoever created it, for good
            config.app = app?.id ?? ""
            config.appKind = app?.kind.rawValue ?? ""
        } else if app == nil, !config.app.isEmpty, identifier != config.app, !identifier.hasPrefix(config.app + ".") {
            // Opened by an app outside its own namespace before apps were held to it (squatted):
            // the host takes it back, so its tasks never go to that app's inbox or relaunch.
            effects.append(
                .log(
                    .warning,
                    "session \(identifier) was opened by the sandboxed app \(config.app) outside its namespace: it is "
                        + "the host's again"))
            config.app = ""
            config.appKind = ""
            config.appHome = ""
        }
        if let app { config.appHome = app.home }
        effects.append(.store(.saveSession(identifier, config)))
        configs[identifier] = config
        if queues[identifier] == nil { queues[identifier] = EventQueue() }
        if !peer.isEmpty { clients[identifier, default: []].insert(peer) }
        let reply = SessionOpened(
            identifier: identifier, created: existing == nil, latestSeq: queues[identifier]?.lastSeq ?? 0,
            inbox: SessionRules(session: identifier, config: config, settings: settings).inbox)
        return (reply, effects)
    }

    /// The session tasks may be added to.
    func usable(_ session: String, _ ledger: AgentLedger) throws {
        // `configs` mirrors the store's sessions: no read (and no JSON) per request.
        guard let config = try configs[session] ?? ledger.session(session) else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        guard !config.invalidating, !config.invalid else {
            throw FerryError(.invalidState, "session '\(session)' was invalidated: open it again for new tasks")
        }
    }

    /// One EventsAvailable per session per burst; then whether its app is needed, and whether
    /// an invalidating session has its last event now. `unfinished`: the session's tasks not
    /// ended yet (memory knows better than the store what this turn ended).
    mutating func flushSignals(
        now: Int64, settings: AgentCore.Settings, unfinished: (String) -> [Int64]?
    )
        -> [AgentEffect]
    {
        let pending = signalsPending
        signalsPending = []
        var effects: [AgentEffect] = []
        for s in pending {
            effects.append(.eventsAvailable(session: s, latest: queues[s]?.lastSeq ?? 0, app: app(s)))
            effects += considerLaunch(s, now: now)
            if configs[s]?.invalidating == true, let ids = unfinished(s) {
                effects += invalidated(s, unfinished: ids, settings: settings)
            }
        }
        return effects
    }

    /// InvalidateSession: the session takes no new task, and gets its last event once its
    /// tasks ended (now, or as the last one ends). nil: it is invalidated already.
    mutating func beginInvalidation(_ session: String, _ ledger: AgentLedger) throws -> [AgentEffect]? {
        guard var c = try ledger.session(session) else { throw FerryError(.noSuchSession, "no session '\(session)'") }
        guard !c.invalid, !c.invalidating else { return nil }
        c.invalidating = true
        configs[session] = c
        return [.store(.saveSession(session, c))]
    }

    /// An invalidating session with no unfinished task gets its last event (and loses its cookies).
    mutating func invalidated(_ session: String, unfinished: [Int64], settings: AgentCore.Settings) -> [AgentEffect] {
        guard var c = configs[session], c.invalidating, unfinished.isEmpty else { return [] }
        c.invalidating = false
        c.invalid = true
        // The session's new state and its last event commit together.
        configs[session] = c
        var effects: [AgentEffect] = [.store(.saveSession(session, c))]
        if c.cookies { effects.append(.forgetCookies(settings.state.cookieJar(session))) }
        return effects + append(session: session, task: 0, .invalidated(error: nil))
    }
}
