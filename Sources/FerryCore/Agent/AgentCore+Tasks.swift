/// Tasks: machine events, what their actions mean for the agent, scheduling, retries, the network.
extension AgentCore {
    /// Runs one machine event for a task (running or stored) and carries out its actions.
    /// `stored`: the task's row as this turn just read it (spares reading it again).
    @discardableResult
    mutating func withMachine(_ id: Int64, _ ledger: AgentLedger, stored: TaskRecord? = nil,
                              _ body: (inout TaskMachine, _ now: Int64) throws -> [TaskMachine.Action]) throws -> TaskRecord {
        var m: TaskMachine
        if let live = machines[id] {
            m = live
        } else if let r = try stored ?? ledger.task(id) {
            m = TaskMachine(r)
        } else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        let before = m
        let actions = try body(&m, now)
        touch(id, before: before)
        machines[id] = m
        carryOut(actions, id, stateBefore: before.record.state)
        let record = machines[id]?.record ?? m.record
        if record.state != .running || (!attached.contains(id) && !finalizing.contains(id)) { machines[id] = nil }
        // Rechecks cycle waiting → queued → running: the warning is forgotten only when the task
        // ends, is paused or waits for something else.
        if record.state.isFinal || record.state == .paused || (record.state == .waiting && record.reason != .space) {
            spaceWarned.remove(id)
        }
        if record.state == .completed { journal?.completed.insert(id) }
        if record.state.isFinal {
            credentials[id] = nil   // an app's password lives no longer than its task
            wake(.prune)
        }
        return record
    }

    private mutating func carryOut(_ actions: [TaskMachine.Action], _ id: Int64, stateBefore: TaskState) {
        for action in actions {
            guard let m = machines[id] else { return }
            let r = m.record
            switch action {
            case .startTransfer(let plan):
                let idle = config(r.session).requestTimeout
                let stall = idle > 0 ? min(settings.stallSeconds, idle) : settings.stallSeconds
                attached.insert(id)
                mayHaveStaged?.insert(id)
                scheduler.started(host: r.host, session: r.session)
                watchForStall(id, seconds: stall, from: plan.offset)
                out.append(.startTransfer(r, plan, stallSeconds: stall, credential: credentials[id]))
                launcherProgressChanged()
            case .stopTransfer:
                // Not journaled as detached: if the turn cannot commit, the stop never happens.
                if attached.remove(id) != nil {
                    stallWatches[id] = nil
                    out.append(.stopTransfer(id))
                    scheduler.stopped(host: r.host, session: r.session)
                    launcherProgressChanged()
                    wake(.schedule)
                }
            case .discardPartial:
                out.append(.discardBytes(id))
            case .quarantine:
                out.append(.quarantine(id))
            case .warnNoSpace:
                if spaceWarned.insert(id).inserted, config(r.session).popups {
                    out.append(.popup(.noSpace(name: Self.displayName(r))))
                }
            case .finalize:
                if finalizing.insert(id).inserted {
                    // A sandboxed app's files stay where it can read them: its default or its inbox.
                    let c = config(r.session)
                    let dir = c.app.isEmpty ? settings.downloadDirectory ?? c.defaultDirectory : c.defaultDirectory ?? inbox(r.session, c)
                    out.append(.finalize(r, defaultDirectory: dir))
                }
            case .scheduleRetry(let at):
                wake(.retry, noLaterThan: at, dueAt: \.retryArmedAt)
            case .emit(let event):
                tellUser(event, r)
                if event.isProgress { launcherProgressChanged() }
                append(session: r.session, task: id, event)
            case .persist:
                let sameState = r.state == .running && stateBefore == .running
                out.append(.store(sameState ? .progress(r) : .update(r)))
                if sameState {
                    // Not a new state: a small file is often done before anyone could look.
                    rowsChanged.insert(id)
                    launcherProgressChanged()
                } else {
                    rowsChanged.remove(id)
                    out.append(.taskChanged(id, r.state, app: app(ofSession: r.session)))
                }
                // The agent's copy of a handed-over descriptor is needed no more (nor ever again).
                if r.state.isFinal, isUploadCopy(r), let copy = r.uploadFile { out.append(.removeFiles([copy])) }
            }
        }
    }

    /// A name for the user: the file's, or the one the URL or the server suggests.
    static func displayName(_ r: TaskRecord) -> String {
        if let output = r.output, let name = output.split(separator: "/").last { return String(name) }
        return FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: DownloadURL.printable(r.url))
    }

    // MARK: - Transfers

    mutating func responseBegan(_ id: Int64, _ head: ResponseHead, _ ledger: AgentLedger) {
        guard attached.contains(id), machines[id] != nil else { return }
        _ = try? withMachine(id, ledger) { m, _ in
            m.responseBegan(status: head.status, contentRangeStart: head.contentRangeStart,
                            totalLength: head.totalLength, etag: head.etag, lastModified: head.lastModified,
                            suggestedName: head.contentDisposition.flatMap(FileNaming.contentDispositionName)).1
        }
    }

    mutating func progressed(_ id: Int64, _ received: Int64, _ ledger: AgentLedger) {
        guard attached.contains(id), let m = machines[id], m.record.received != received else { return }
        stallWatches[id]?.lastMoved = now
        _ = try? withMachine(id, ledger) { m, now in m.progressed(received: received, now: now) }
        progressMoved.insert(id)
        launcherProgressChanged()
    }

    /// TasksProgressed rides on the docks' twice-a-second wake: no timer of its own.
    mutating func reportProgress() {
        for id in rowsChanged.sorted() {
            if let r = machines[id]?.record { out.append(.taskChanged(id, r.state, app: app(ofSession: r.session))) }
        }
        rowsChanged = []
        guard !progressMoved.isEmpty else { return }
        var moved: [String: [TaskProgress]] = [:]   // by owning app
        for id in progressMoved.sorted() {
            guard let r = machines[id]?.record else { continue }
            moved[app(ofSession: r.session), default: []].append(TaskProgress(task: id, received: r.received, expected: r.expected ?? -1))
        }
        progressMoved = []
        for (app, list) in moved.sorted(by: { $0.key < $1.key }) { out.append(.tasksProgressed(list, app: app)) }
    }

    mutating func transferEnded(_ id: Int64, received: Int64, _ outcome: TransferOutcome, _ ledger: AgentLedger) {
        stallWatches[id] = nil
        guard attached.remove(id) != nil, let r = machines[id]?.record else { return }
        journal?.detached.insert(id)
        scheduler.stopped(host: r.host, session: r.session)
        launcherProgressChanged()
        if outcome.curlCode != 0 {
            log(.info, "task \(id): attempt ended: curl \(outcome.curlCode) HTTP \(outcome.httpStatus) \(outcome.rejection ?? outcome.curlMessage)")
        }
        let reachable = network.available || DownloadURL.isLoopback(host: r.host)
        let backoff = settings.backoff, deadline = deadline(r), random = random(id)
        let canChallenge = config(r.session).keepEvents, recheck = settings.spaceRecheck
        _ = try? withMachine(id, ledger) { m, now in
            _ = m.progressed(received: received, now: now)
            return m.transferEnded(outcome, backoff: backoff, resourceDeadline: deadline, now: now, random: random,
                                   networkAvailable: reachable, canChallenge: canChallenge, spaceRecheck: recheck)
        }
        wake(.schedule)
    }

    /// ENOSPC waits for space; anything else fails clearly.
    mutating func transferCouldNotStart(_ id: Int64, _ outcome: TransferOutcome, _ ledger: AgentLedger) {
        stallWatches[id] = nil
        guard attached.remove(id) != nil, let r = machines[id]?.record else { return }
        journal?.detached.insert(id)
        scheduler.stopped(host: r.host, session: r.session)
        let backoff = settings.backoff, deadline = deadline(r), random = random(id), recheck = settings.spaceRecheck
        _ = try? withMachine(id, ledger) { m, now in
            m.transferEnded(outcome, backoff: backoff, resourceDeadline: deadline, now: now, random: random, spaceRecheck: recheck)
        }
        wake(.schedule)
    }

    /// Backoff jitter without a random source: the task id and the time spread retries well enough.
    func random(_ id: Int64) -> Double {
        var x = UInt64(bitPattern: now) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: id)
        x ^= x >> 31; x &*= 0xBF58_476D_1CE4_E5B9; x ^= x >> 29
        return Double(x % 1_000_000) / 1_000_000
    }

    func deadline(_ r: TaskRecord) -> Int64? {
        r.created + Int64(config(r.session).resourceTimeout) * 1_000_000
    }

    mutating func finalized(_ id: Int64, _ result: FinalizeResult, _ ledger: AgentLedger) {
        guard finalizing.remove(id) != nil else { return }
        journal?.finalized.insert(id)
        guard machines[id] != nil else { return }
        let recheck = settings.spaceRecheck
        let quarantine = Self.quarantinePath(stateDirectory: settings.stateDirectory, task: id)
        let record = try? withMachine(id, ledger) { m, now in
            switch result {
            case .saved(let path, _):
                return m.finalized(file: path, now: now)
            case .noSpace(let message):
                return m.finalizeNeedsSpace(message: message, recheck: recheck, now: now)
            case .checksumMismatch(let message):
                let kept = message + "; the bytes are kept apart in \(quarantine) (never delivered)"
                return m.checksumMismatched(message: kept, now: now)
            case .failed(let name, let message):
                return m.finalizeFailed(name: name, message: message, now: now)
            }
        }
        switch (result, record?.state) {
        case (.saved(let path, let cleanup), .completed?):
            log(.info, "task \(id): complete: \(path)")
            // Once committed, the staging name (and a copy's second name) are no longer needed.
            if !cleanup.isEmpty { out.append(.removeFiles(cleanup)) }
        case (.noSpace(let message), _): log(.warning, "task \(id): waiting for space: \(message)")
        case (.checksumMismatch(let message), _), (.failed(_, let message), _): log(.warning, "task \(id): failed: \(message)")
        default: break
        }
        if record?.state != .running { machines[id] = nil }
        wake(.schedule)
    }

    // MARK: - Scheduling

    /// Starts what may run. No gate on the network monitor: "no default route" is not
    /// "unreachable" (a LAN, loopback); attempts that cannot reach their server wait for it.
    mutating func schedule(_ ledger: AgentLedger) {
        guard scheduler.freeSlots > 0 else { return }
        var plan = scheduler
        let next: [TaskRecord]
        do {
            let sessions = self.sessions, network = self.network
            next = try ledger.nextQueued(limit: scheduler.freeSlots, excludingHosts: scheduler.fullHosts,
                                         excludingIDs: attached.union(storeBlocked).union(finalizing)) { r in
                guard plan.mayStart(host: r.host) else { return .skipHost }
                let c = sessions[r.session] ?? SessionConfig()
                let policy = SessionPolicy(allowMetered: c.allowMetered, discretionary: c.discretionary, perHostLimit: c.perHostLimit)
                guard policy.mayStart(metered: network.metered, powerSaver: network.powerSaver,
                                      runningForHost: plan.running(session: r.session, host: r.host)) else { return .skipTask }
                plan.started(host: r.host, session: r.session)
                return .take
            }
        } catch {
            log(.error, "cannot read the queue: \(error)")
            return
        }
        for r in next {
            let unstaged = r.kind == .upload || mayHaveStaged.map { !$0.contains(r.id) } == true
            let partial = unstaged ? 0 : ledger.stagedBytes(r.id)
            _ = try? withMachine(r.id, ledger, stored: r) { m, now in m.start(partialBytes: partial, now: now) }
        }
    }

    /// One wake for the earliest retry of all waiting tasks (none when nothing waits).
    mutating func armRetry(_ ledger: AgentLedger) {
        retryArmedAt = nil
        armed.remove(.retry)
        guard let at = try? ledger.earliestRetry(after: .min) else { return }
        retryArmedAt = at
        wake(.retry, at: at)
    }

    mutating func retryDue(_ ledger: AgentLedger) {
        retryArmedAt = nil
        let due = (try? ledger.dueRetries(now: now, limit: 1_000)) ?? []
        for r in due { _ = try? withMachine(r.id, ledger) { m, now in m.retryDue(now: now) } }
        // The due ones' changes are not in the store yet: look only beyond now.
        if due.count == 1_000 {
            retryArmedAt = now
            wake(.retry, at: now)
        } else if let at = try? ledger.earliestRetry(after: now) {
            wake(.retry, noLaterThan: at, dueAt: \.retryArmedAt)
        }
        wake(.schedule)
    }

    /// Any change (a route, an interface, a LAN) may make a waiting task's server reachable:
    /// they all try again at once, from their partial bytes. When the network comes or goes,
    /// running transfers restart too, on new connections (the old ones may lead nowhere).
    mutating func networkChanged(_ state: NetworkState, _ ledger: AgentLedger) {
        log(.info, state.available ? "network available" : "network changed; no default route")
        let flipped = networkKnown && network.available != state.available
        network = state
        networkKnown = true
        if flipped {
            for id in attached.sorted() { _ = try? withMachine(id, ledger) { m, now in m.networkChanged(now: now) } }
            out.append(.dropConnections)
        }
        for r in (try? ledger.waitingForNetwork()) ?? [] {
            _ = try? withMachine(r.id, ledger) { m, now in m.networkReturned(now: now) }
        }
        wake(.schedule)
    }

    /// The store commits again: tasks it refused continue from their bytes.
    mutating func storeRecheck() {
        guard !storeBlocked.isEmpty else { return }
        out.append(.store(.requeueIfRunning(storeBlocked.sorted())))
        log(.info, "the store commits again: \(storeBlocked.count) task(s) continue")
        storeBlocked.removeAll()
        wake(.schedule)
    }

    // MARK: - Housekeeping

    /// Retention: ended tasks older than `keepEnded` leave the list (their files stay). Looked
    /// at when the agent starts and when a task ends, at most once an hour: no timer of its own,
    /// so an idle agent never wakes up for it.
    mutating func pruneEndedTasks(_ ledger: AgentLedger) {
        let keep = settings.keepEnded
        guard keep > 0, now - lastPrune >= 3_600_000_000 || lastPrune == 0 else { return }
        lastPrune = now
        do {
            let old = try ledger.endedTaskIDs(session: nil, updatedBefore: now - keep)
            guard !old.isEmpty else { return }
            try removeTasks(old, ledger)
            log(.info, "removed \(old.count) task(s) that ended more than \(keep / 86_400_000_000) day(s) ago from the list")
        } catch {
            log(.error, "cannot prune ended tasks: \(error)")
        }
    }

    /// Ended tasks leave the list; the user's files stay, kept partial and quarantined bytes go.
    /// All or nothing.
    mutating func removeTasks(_ ids: [Int64], _ ledger: AgentLedger) throws {
        var owners: [String: [Int64]] = [:]
        for id in ids {
            let r = try shownTask(id, ledger)
            guard r.state.isFinal, !finalizing.contains(id) else {
                throw FerryError(.invalidState, "task \(id) is \(r.state.rawValue): cancel it before removing it from the list")
            }
            owners[app(ofSession: r.session), default: []].append(id)
        }
        out.append(.store(.deleteTasks(ids)))
        for (app, list) in owners.sorted(by: { $0.key < $1.key }) { out.append(.tasksRemoved(list, app: app)) }
        for id in ids {
            out.append(.discardBytes(id))
            machines[id] = nil
            spaceWarned.remove(id)
        }
    }

    /// A task as callers see it: live figures while it runs; waiting for space while the store
    /// refuses its changes.
    func shownTask(_ id: Int64, _ ledger: AgentLedger) throws -> TaskRecord {
        if let m = machines[id] { return m.record }
        guard let r = try ledger.task(id) else { throw FerryError(.noSuchTask, "no task with id \(id)") }
        return shown(r)
    }

    func shown(_ r: TaskRecord) -> TaskRecord {
        if let m = machines[r.id] { return m.record }
        guard storeBlocked.contains(r.id) else { return r }
        var w = r
        w.state = .waiting
        w.reason = .space
        w.error = "the agent cannot save its records (is the disk holding its state full?); the task continues when it can"
        return w
    }

    // MARK: - Telling the user

    private mutating func tellUser(_ event: SessionEvent, _ r: TaskRecord) {
        guard config(r.session).popups else { return }
        switch event {
        case .finished(let file, _):
            out.append(.popup(.completed(file: file)))
            setBadge(badge + 1)
        case .completed(let error?, let name, _) where name != "Canceled":
            out.append(.popup(.failed(name: Self.displayName(r), reason: error)))
        default:
            break
        }
    }

    mutating func resetBadge() { if badge != 0 { setBadge(0) } }

    private mutating func setBadge(_ value: Int) {
        badge = value
        out.append(.store(.badge(value)))
        // Docks hear of it within 0.1 s, in one Update for a burst of completions.
        wake(.launcher, at: now + 100_000)
    }

    /// Progress reaches docks at most twice a second, and only while something transfers.
    mutating func launcherProgressChanged() { wake(.launcher, at: now + 500_000) }
}
