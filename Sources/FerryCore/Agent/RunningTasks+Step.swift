/// One machine event for a task, and what its actions mean for the agent: transfers, saves,
/// store writes, signals; notes for the other machines.
extension RunningTasks {
    /// Runs one machine event for a task (running or stored) and carries out its actions.
    /// `stored`: the task's row as this turn just read it (spares reading it again).
    /// `logsFailure`: a task that fails for good in this step is worth a warning
    /// (`journalctl -p warning` shows it), naming the task and why.
    mutating func step(
        _ id: Int64, _ ctx: TaskContext, stored: TaskRecord? = nil, logsFailure: Bool = false,
        _ body: (inout TaskMachine, _ now: Int64) throws -> [TaskMachine.Action]
    ) throws -> TaskSteps {
        var steps = TaskSteps()
        try step(id, ctx, stored: stored, logsFailure: logsFailure, into: &steps, body)
        return steps
    }

    /// `step`, its effects and notes added to `steps` (for many tasks at once: appending one
    /// list of effects to another would copy each record they carry). Returns the task's state.
    @discardableResult
    mutating func step(
        _ id: Int64, _ ctx: TaskContext, stored: TaskRecord? = nil, logsFailure: Bool = false,
        into steps: inout TaskSteps, _ body: (inout TaskMachine, _ now: Int64) throws -> [TaskMachine.Action]
    ) throws -> TaskState {
        // Taken out of memory, not copied: changed in place by its one owner, then put back.
        remember(id)
        var m: TaskMachine
        let live: Bool
        if let taken = machines.removeValue(forKey: id) {
            (m, live) = (taken, true)
        } else if let r = try stored ?? ctx.ledger.task(id) {
            (m, live) = (TaskMachine(r), false)
        } else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        let stateBefore = m.record.state
        let actions: [TaskMachine.Action]
        do {
            actions = try body(&m, ctx.now)
        } catch {
            if live { machines[id] = m }  // a machine's step refuses before it changes anything
            throw error
        }
        journal.touched.insert(id)
        machines[id] = consume m
        carryOut(actions, id, stateBefore: stateBefore, ctx, into: &steps)
        // carryOut keeps the machine; were it gone, the task's row is what the store has.
        guard let record = try machines[id]?.record ?? ctx.ledger.task(id) else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        if record.state != .running || (!attached.contains(id) && !finalizing.contains(id)) {
            machines[id] = nil
        }
        // Rechecks cycle waiting → queued → running: the warning is forgotten only when the task
        // ends, is paused or waits for something else.
        // (An ended task's is forgotten with what it held: `TaskNote.ended`.)
        if record.state == .paused || (record.state == .waiting && record.reason != .space) {
            steps.notes.append(.spaceWaitOver(id))
        }
        if record.state == .completed { journal.completed.insert(id) }
        if record.state.isFinal {
            steps.notes.append(.ended(id: id, created: record.created, host: record.host))
            steps.effects.append(.wake(.prune, at: nil))
        }
        if logsFailure && record.state == .failed {
            steps.effects.append(
                .log(.warning, "task \(id) failed: \(record.error ?? "no reason given") (\(Self.displayName(record)))"))
        }
        steps.state = record.state
        return record.state
    }

    /// The same event for many tasks, each on its own: one that refuses is left as it was.
    /// `counted`: how many came out in that state.
    mutating func stepEach(
        _ ids: some Sequence<Int64>, _ ctx: TaskContext, counting counted: TaskState? = nil,
        _ body: (inout TaskMachine, _ now: Int64) throws -> [TaskMachine.Action]
    ) -> (steps: TaskSteps, count: Int) {
        var all = TaskSteps(), n = 0
        for id in ids {
            let state = try? step(id, ctx, into: &all, body)
            if let counted, state == counted { n += 1 }
        }
        return (all, n)
    }

    /// Keeps a task's machine as it was before the open turn, before the turn first changes it
    /// (the turn's copy of the core leaves the machines out: a turn copies only those it changes).
    mutating func remember(_ id: Int64) {
        guard journal.machinesBefore.index(forKey: id) == nil else { return }
        journal.machinesBefore[id] = .some(machines[id])
    }

    /// The task's machine leaves memory (its row is what the store has).
    mutating func forget(_ id: Int64) {
        remember(id)
        machines[id] = nil
    }

    private mutating func carryOut(
        _ actions: [TaskMachine.Action], _ id: Int64, stateBefore: TaskState, _ ctx: TaskContext,
        into steps: inout TaskSteps
    ) {
        for action in actions {
            guard let r = machines[id]?.record else { break }
            switch action {
            case .startTransfer(var plan):
                let rules = ctx.rules(r.session), stall = rules.stallSeconds
                plan.cookieJar = rules.cookieJar
                plan.httpsRedirectsOnly = r.kind == .upload && TaskMachine.downgrades(r.url, to: "http:")
                plan.receiveBuffer = ReceiveBuffer.size(maxTransfers: ctx.settings.maxTotal)
                if r.kind == .download, plan.offset == 0, ctx.app(r.session).isEmpty {
                    plan.goAhead = BodyGoAhead(reserve: ctx.settings.stateReserve, decodesContent: plan.decodesContent)
                }
                // The credentials it carries are CredentialBook's to give (the router adds them).
                let watch = StallWatch(lastMoved: ctx.now, limit: Int64(max(1, stall)) * 1_000_000, offset: plan.offset)
                attach(r, stall: watch)
                steps.startsTransfer = true
                steps.transfersChanged = true
                // One at a time: a list literal appended is copied, and the record with it.
                steps.effects.append(.wake(.stall, at: ctx.now + watch.limit))
                steps.effects.append(.startTransfer(r, plan, stallSeconds: stall, credential: nil))
                steps.effects.append(Self.launcherWake(ctx.now))
            case .stopTransfer:
                // Not journaled as detached: if the turn cannot commit, the stop never happens.
                if detach(id) != nil {
                    steps.transfersChanged = true
                    steps.effects.append(.stopTransfer(id))
                    steps.effects.append(Self.launcherWake(ctx.now))
                    steps.effects.append(.wake(.schedule, at: nil))
                }
            case .discardPartial:
                steps.effects.append(.discardBytes(id))
            case .quarantine:
                steps.effects.append(.quarantine(id))
            case .warnNoSpace:
                steps.notes.append(.noSpace(r))
            case .finalize:
                if finalizing.insert(id).inserted {
                    let rules = ctx.rules(r.session)
                    steps.effects.append(
                        r.kind == .upload
                            ? .finalize(rules.reply(of: r), defaultDirectory: nil, confined: rules.confined)
                            : .finalize(r, defaultDirectory: rules.defaultDirectory, confined: rules.confined))
                }
            case .scheduleRetry(let at):
                steps.effects.append(.wake(.retry, at: at))
            case .emit(let event):
                let record = UserDelivery.needsRecord(event) ? r : nil
                steps.notes.append(.event(session: r.session, task: id, event, record: record))
                if event.isProgress { steps.effects.append(Self.launcherWake(ctx.now)) }
            case .persist:
                let sameState = r.state == .running && stateBefore == .running
                // A start writes no row: the store keeps a running task queued, which is what a
                // crash makes of it anyway, and no index or count changes twice for one file.
                // What it moves, names and ends is written without its keys, or as its new state.
                if r.state != .running {
                    steps.effects.append(.store(.update(r)))
                } else if sameState {
                    steps.effects.append(.store(.progress(r)))
                }
                // Told on the progress wake, not now: a row changed in place (a small file is often
                // done before anyone could look), and a start once it has run for a while
                // (`LiveChanges.startToldAfter`). Any other new state at once.
                if sameState {
                    live.rowsChanged.insert(id)
                } else if r.state == .running {
                    live.startsUntold[id] = ctx.now
                } else {
                    live.rowsChanged.remove(id)
                    live.startsUntold[id] = nil
                }
                steps.effects.append(
                    r.state == .running
                        ? Self.launcherWake(ctx.now) : .taskChanged(id, r.state, app: ctx.app(r.session)))
                // The agent's copy of a handed-over descriptor is needed no more (nor ever again).
                if r.state.isFinal, let copy = r.uploadFile, copy.hasPrefix(ctx.settings.state.uploads) {
                    steps.effects.append(.removeFiles([copy], confined: false))
                }
            }
        }
    }

    /// Progress reaches docks at most twice a second, and only while something transfers.
    static func launcherWake(_ now: Int64) -> AgentEffect { .wake(.launcher, at: now + 500_000) }

    /// A name for the user: the file's, or the one the URL or the server suggests.
    static func displayName(_ r: TaskRecord) -> String {
        if let output = r.output, let name = output.split(separator: "/").last { return String(name) }
        return FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: DownloadURL.printable(r.url))
    }
}
