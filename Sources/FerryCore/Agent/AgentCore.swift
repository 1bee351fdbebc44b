/// Every decision of the agent, as a value: an input and the time go in, effects come out.
/// A router over small machines, each with its own state and tests, each taking its events and
/// returning its effects: `RunningTasks` (the tasks in memory, the scheduler's slots, their
/// steps), `SessionBook` (sessions, their event queues, clients and relaunches), `UserDelivery`
/// (popups, badge, live figures), `CredentialBook` (credentials and the keyring's part),
/// `WakePlan` (the wakes armed in the shell) and `World` (the network, hints about the disk).
/// A task's step also returns notes for the other machines (`TaskNote`), which `absorb` hands
/// to their owners. The task queue itself stays in the store and is read through an
/// `AgentLedger`. No C, no I/O, no clock.
///
/// Effects of one loop turn commit together (group commit). When the store cannot commit,
/// `commitFailed` puts the whole value back as it was before the turn (`TurnStart`), keeping
/// only what the shell did meanwhile; the changed tasks wait for the store.
public struct AgentCore: Sendable {
    public internal(set) var settings: Settings
    var tasks: RunningTasks
    var sessions = SessionBook()
    var user = UserDelivery()
    /// Facts of the shell and the world: a turn that cannot commit keeps them.
    var wakes = WakePlan()
    var world = World()
    /// Credentials: tasks', those kept for sessions, and the keyring's part in challenges.
    var credentials = CredentialBook()
    /// The user's speed limits, shared by the running transfers.
    var speed = SpeedLimits()
    /// Memory before the open turn (see `commitFailed`).
    var turnStart: TurnStart?

    public init(settings: Settings) {
        self.settings = settings
        tasks = RunningTasks(maxTotal: settings.maxTotal, maxPerHost: settings.maxPerHost)
        speed.download.limit = settings.downloadLimit
        speed.upload.limit = settings.uploadLimit
    }

    /// The entry point of every input but requests (`answer`): what it means, as effects.
    public mutating func handle(_ input: AgentInput, now: Int64, ledger: AgentLedger) -> [AgentEffect] {
        beginTurnIfNeeded()
        let ctx = context(now, ledger)
        switch input {
        case .started(let state): return started(state, now, ledger)
        case .responseBegan(let id, let head): return absorb(tasks.responseBegan(id, head, ctx), ctx)
        case .progressed(let id, let received): return absorb(tasks.progressed(id, received, ctx), ctx)
        case .stagingSpace(let id, let received, let space):
            return absorb(tasks.stagingSpace(id, received: received, space, ctx), ctx)
        case .uploadResourceAnnounced(let id, let location):
            return absorb(tasks.resourceAnnounced(id, location, ctx), ctx)
        case .transferEnded(let id, let received, let outcome):
            var step = CredentialBook.ChallengeStep.notTaken
            // Only a 401 or a 407 concerns the credentials (and only then is the record read).
            if outcome.httpStatus == 401 || outcome.asksProxyCredentials, let r = tasks.attachedRecord(id) {
                let c = sessions.config(r.session)
                step = credentials.attemptEnded(r, outcome, app: c.app, canChallenge: c.keepEvents)
            }
            return absorb(tasks.transferEnded(id, received: received, outcome, credentials: step, ctx), ctx)
        case .transferCouldNotStart(let id, let outcome):
            return absorb(tasks.transferCouldNotStart(id, outcome, ctx), ctx)
        case .finalized(let id, let result): return absorb(tasks.finalized(id, result, ctx), ctx)
        case .wake(let wake): return woke(wake, ctx)
        case .networkChanged(let state): return networkChanged(state, now, ledger)
        case .mountsChanged: return absorb(tasks.mountsChanged(ctx), ctx)
        case .peerLeft(let peer): return armed(sessions.peerLeft(peer, now: now))
        case .appLaunched(let session, let pid): return armed(sessions.appLaunched(session, pid: pid))
        case .appLaunchFailed(let session, let message):
            return armed(sessions.appLaunchFailed(session, message, now: now))
        case .appExited(let session, let status): return armed(sessions.appExited(session, status: status, now: now))
        case .popupActivated(let session):
            return armed(user.popupActivated(session, config: session.map(sessions.config), now: now))
        case .settingsChanged(let s): return settingsChanged(s, now, ledger)
        case .credentialFound(let id, let c): return credentialFound(id, c, ctx)
        case .stopping(let received): return tasks.stopping(received, now: now)
        }
    }

    /// What a task's step reads of the other machines, now.
    func context(_ now: Int64, _ ledger: AgentLedger) -> TaskContext {
        TaskContext(now: now, ledger: ledger, settings: settings, configs: sessions.configs, network: world.network)
    }

    private mutating func woke(_ wake: AgentWake, _ ctx: TaskContext) -> [AgentEffect] {
        wakes.fired(wake)
        switch wake {
        case .schedule: return absorb(tasks.schedule(ctx, mayHaveStaged: world.mayHaveStaged), ctx)
        case .signals:
            let machines = tasks.machines
            // The store may still show tasks this turn ended: memory knows better.
            return armed(
                sessions.flushSignals(now: ctx.now, settings: settings) {
                    (try? ctx.ledger.unfinishedTaskIDs(session: $0))?.filter {
                        machines[$0].map { !$0.record.state.isFinal } ?? true
                    }
                })
        case .retry:
            wakes.retryDueAt = nil
            return absorb(tasks.retryDue(ctx), ctx)
        case .storeRecheck: return armed(tasks.storeRecheck())
        case .launcher:
            // TasksProgressed rides on the docks' twice-a-second wake: no timer of its own.
            let machines = tasks.machines
            let (told, waiting) = tasks.live.due(at: ctx.now) { machines[$0]?.record.state == .running }
            tasks.live = waiting
            return [.launcherChanged]
                + user.report(told, record: { machines[$0]?.record }, app: sessions.app)
                + armed(waiting.nextStartDue.map { [.wake(.launcher, at: $0)] } ?? [])
        case .relaunch(let session): return armed(sessions.considerLaunch(session, now: ctx.now))
        case .pendingLaunches: return armed(sessions.considerLaunches(now: ctx.now))
        case .prune: return pruneIfDue(ctx)
        case .stall:
            wakes.stallDueAt = nil
            return absorb(tasks.checkStalls(ctx), ctx)
        case .rates: return armed(speed.share(tasks.limited, now: ctx.now, measure: true))
        }
    }

    /// Effects on their way out: a wake goes through the plan (one of each armed in the shell;
    /// retries and stalls at the earliest moment asked for). In place: an effect copied to
    /// another list would retain every field of the record it carries.
    /// The first input of a turn notes what a turn that cannot commit puts back.
    mutating func beginTurnIfNeeded() {
        guard turnStart == nil else { return }
        tasks.journal = TaskJournal()
        sessions.lastSeqBeforeTurn = [:]
        turnStart = TurnStart(self)
    }

    mutating func armed(_ effects: consuming [AgentEffect]) -> [AgentEffect] {
        var effects = effects
        // Looked at where they lie: iterating (or a predicate's argument) copies each effect.
        var dropped: [Int] = []
        effects.withUnsafeBufferPointer { list in
            for i in list.indices {
                guard case .wake(let w, let at) = list[i] else { continue }
                let armed =
                    switch (w, at) {
                    case (.retry, let at?): wakes.arm(.retry, noLaterThan: at, due: \.retryDueAt)
                    case (.stall, let at?): wakes.arm(.stall, noLaterThan: at, due: \.stallDueAt)
                    default: wakes.arm(w, at: at)
                    }
                if armed == nil { dropped.append(i) }  // the plan arms it as asked, or it is armed already
            }
        }
        for i in dropped.reversed() { effects.remove(at: i) }
        return effects
    }

    /// Tasks' steps, their notes handed to the machines they concern; a transfer to start gets
    /// the credentials CredentialBook gives it.
    mutating func absorb(_ steps: consuming TaskSteps, _ ctx: TaskContext) -> [AgentEffect] {
        var effects: [AgentEffect] = [], notes: [TaskNote] = []
        let transfersChanged = steps.transfersChanged
        swap(&effects, &steps.effects)  // moved, not copied (see `armed`)
        swap(&notes, &steps.notes)
        for i in effects.indices where steps.startsTransfer {
            guard case .startTransfer(let r, var plan, let stall, _) = effects[i] else { continue }
            let (server, proxy) = credentials.forTransfer(r.id, to: plan.url)
            plan.proxyCredential = proxy
            world.mayHaveStaged?.insert(r.id)
            effects[i] = .startTransfer(r, plan, stallSeconds: stall, credential: server)
        }
        // Taken out one by one (`popLast` moves): iterating would copy each note's record.
        notes.reverse()
        while let note = notes.popLast() {
            switch consume note {
            case .event(let session, let task, let event, let record):
                if !event.isProgress, case let c = sessions.config(session), c.popups {
                    effects += user.taskEvent(
                        event, name: record.map(RunningTasks.displayName) ?? "",
                        appSession: c.app.isEmpty ? nil : session,
                        now: ctx.now)
                }
                effects += sessions.append(session: session, task: task, event)
            case .noSpace(let r):
                if sessions.config(r.session).popups {
                    effects += user.noSpace(r.id, name: RunningTasks.displayName(r))
                }
            case .spaceWaitOver(let id): user.spaceWarned.remove(id)
            case .ended(let id, let created, let host):
                user.spaceWarned.remove(id)
                effects += credentials.taskEnded(id: id, created: created, host: host)
            }
        }
        // A transfer started or ended: the speed limits are shared again (only while any applies).
        if transfersChanged, speed.concerns(capped: !tasks.capped.isEmpty) {
            effects += speed.share(tasks.limited, now: ctx.now, measure: false)
        }
        return armed(consume effects)
    }
}
