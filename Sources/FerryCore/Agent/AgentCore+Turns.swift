/// The agent's start, the world around it changing (network, settings, the keyring's answer),
/// and the end of a turn: committed, or put back as it was.
extension AgentCore {
    mutating func started(_ s: AgentStartState, _ now: Int64, _ ledger: AgentLedger) -> [AgentEffect] {
        sessions.queues = s.queues
        sessions.configs = s.sessions
        user.badge = s.badge
        tasks.lastTaskID = s.lastTaskID
        world.mayHaveStaged = s.staged
        for (id, q) in s.queues { sessions.reservedSeq[id] = q.lastSeq }
        var effects = armed(credentials.moveOutOfURLs(s.urlCredentials))
        effects.append(.launcherChanged)  // docks want the current state from a (re)started agent
        effects += networkChanged(s.network, now, ledger)  // tasks that waited for it before a restart try again
        return effects
            + armed(
                tasks.nextRetry(after: .min, ledger) + [
                    .wake(.schedule, at: nil),
                    .wake(.prune, at: nil),  // after the first answers
                    // Events that waited across a restart may need their app. Apps still running
                    // reopen their sessions when they see the new agent: give them a moment first.
                    .wake(.pendingLaunches, at: now + 2_000_000),
                ])
    }

    /// Any change (a route, an interface, a LAN) may make a waiting task's server reachable.
    /// When the network comes or goes, running transfers restart too, on new connections (the
    /// old ones may lead nowhere); on a metered one the user does not allow, they stop and wait.
    mutating func networkChanged(_ state: NetworkState, _ now: Int64, _ ledger: AgentLedger) -> [AgentEffect] {
        let flipped = world.networkKnown && world.network.available != state.available
        // Said once at start and when it comes, goes or turns metered; the monitor's other
        // changes (a route, an interface) only at debug level.
        let news = !world.networkKnown || flipped || world.network.metered != state.metered
        var effects: [AgentEffect] = [
            .log(
                news ? .info : .debug,
                state.available
                    ? "network available" + (state.metered ? " (metered)" : "") : "network changed; no default route")
        ]
        let refused = !settings.allowMetered && state.metered && !world.network.metered
        world.network = state
        world.networkKnown = true
        let ctx = context(now, ledger)
        effects += absorb(tasks.networkChanged(restart: flipped || refused, ctx), ctx)
        // After the stops: the stopped transfers' connections go too.
        if flipped { effects.append(.dropConnections) }
        return effects
    }

    /// The user changed a setting while the agent runs (GSettings, `ferry config`, Preferences):
    /// it applies from now on, without a restart.
    mutating func settingsChanged(_ new: Settings, _ now: Int64, _ ledger: AgentLedger) -> [AgentEffect] {
        let old = settings
        settings = new
        // More slots start queued tasks at once; fewer let running transfers finish (none is cut).
        tasks.scheduler.maxTotal = max(1, new.maxTotal)
        tasks.scheduler.maxPerHost = max(1, new.maxPerHost)
        let ctx = context(now, ledger)
        var effects: [AgentEffect] = []
        if new.downloadLimit != old.downloadLimit || new.uploadLimit != old.uploadLimit {
            speed.download.limit = new.downloadLimit  // applied at once
            speed.upload.limit = new.uploadLimit
            effects = armed(speed.share(tasks.limited, now: now, measure: false))
        }
        if old.allowMetered && !new.allowMetered && world.network.metered {
            // Turned off on a metered network: what runs stops and waits, from its bytes.
            effects += absorb(tasks.stopAttached(ctx), ctx)
        }
        if new.keepEnded != old.keepEnded {
            world.lastPrune = 0
            effects += pruneIfDue(ctx)
        }
        return effects + armed([.wake(.schedule, at: nil)])
    }

    /// Retention: looked at when the agent starts and when a task ends, at most once an hour:
    /// no timer of its own, so an idle agent never wakes up for it.
    mutating func pruneIfDue(_ ctx: TaskContext) -> [AgentEffect] {
        guard settings.keepEnded > 0, ctx.now - world.lastPrune >= 3_600_000_000 || world.lastPrune == 0 else {
            return []
        }
        world.lastPrune = ctx.now
        return absorb(tasks.prune(ctx), ctx)
    }

    /// The keyring's answer for a task that got a 401.
    mutating func credentialFound(_ id: Int64, _ credential: Credential?, _ ctx: TaskContext) -> [AgentEffect] {
        var steps: TaskSteps?
        switch credentials.keyringAnswered(id, credential) {
        case .unasked:
            return []
        case .use:
            steps = try? tasks.step(id, ctx) { m, now in m.rememberedCredentialFound(now: now) }
        case .none(let pending):
            let backoff = settings.backoff
            steps = try? tasks.step(id, ctx) { m, now in
                m.noRememberedCredential(
                    pending.outcome, backoff: backoff, resourceDeadline: nil, now: now,
                    canChallenge: pending.canChallenge)
            }
        }
        var all = steps ?? TaskSteps()
        all.effects.append(.wake(.schedule, at: nil))
        return absorb(all, ctx)
    }

    // MARK: - Turns

    /// The turn's store writes are durable: the files it completed are logged now (see
    /// `SavedFile.log`).
    @discardableResult
    public mutating func committed() -> [AgentEffect] {
        if turnStart != nil, !tasks.journal.completed.isEmpty { world.mayHaveStaged?.subtract(tasks.journal.completed) }
        turnStart = nil
        let saved = tasks.journal.saved
        tasks.journal.saved = []
        return SavedFile.log(saved)
    }

    /// The store refused the turn's writes: memory goes back, as a whole, to its value before
    /// the turn, which is what the store says. Kept are only what the shell did meanwhile and
    /// cannot take back: a transfer the turn stopped keeps running, one it started never
    /// starts, a task left without its transfer waits until the store commits again, then
    /// continues from its bytes. Events of the turn are forgotten (their numbers are never
    /// reused: they were reserved before).
    public mutating func commitFailed(now: Int64) -> [AgentEffect] {
        guard let start = turnStart else { return [] }
        var core = start.before[0]
        let journal = tasks.journal
        core.tasks.machines = tasks.machines
        for (id, before) in journal.machinesBefore { core.tasks.machines[id] = before }
        core.sessions.carryOver(from: sessions)
        core.tasks.carryOver(journal)
        core.wakes = wakes
        core.world = world
        core.settings = settings  // the user's settings are not the turn's to take back
        core.tasks.scheduler.maxTotal = tasks.scheduler.maxTotal
        core.tasks.scheduler.maxPerHost = tasks.scheduler.maxPerHost
        self = core
        let recheck: [AgentEffect] =
            tasks.storeBlocked.isEmpty ? [] : [.wake(.storeRecheck, at: now + settings.spaceRecheck)]
        return armed(recheck) + [.launcherChanged]
    }

    // MARK: - Queries (pure reads of memory, for the shell)

    /// What docks show: the badge, and the progress (0...1) of all running transfers.
    public var launcherState: (count: Int, progress: Double, transferring: Bool) {
        var received: Int64 = 0, expected: Int64 = 0
        for m in tasks.machines.values where m.record.state == .running {
            if let e = m.record.expected, e > 0 { received += m.record.received; expected += e }
        }
        return (user.badge, expected > 0 ? min(1, Double(received) / Double(expected)) : 0, !tasks.attached.isEmpty)
    }

    /// The live record of a running task (progress not yet checkpointed).
    public func liveRecord(_ id: Int64) -> TaskRecord? { tasks.machines[id]?.record }

    /// The sandboxed app a session belongs to (empty: the host's).
    public func app(ofSession session: String) -> String { sessions.app(session) }
}
