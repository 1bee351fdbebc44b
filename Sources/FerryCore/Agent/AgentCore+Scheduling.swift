/// When tasks run: scheduling, retries, the network, a store that commits again, and ended
/// tasks leaving the list.
extension AgentCore {
    // MARK: - Scheduling

    /// Starts what may run. No gate on the network monitor: "no default route" is not
    /// "unreachable" (a LAN, loopback); attempts that cannot reach their server wait for it.
    mutating func schedule(_ ledger: AgentLedger) {
        guard tasks.scheduler.freeSlots > 0, networkAllowed else { return }
        var plan = tasks.scheduler
        let next: [TaskRecord]
        do {
            let book = sessions, network = world.network
            next = try ledger.nextQueued(
                limit: tasks.scheduler.freeSlots, excludingHosts: tasks.scheduler.fullHosts,
                excludingIDs: tasks.attached.union(tasks.storeBlocked).union(tasks.finalizing)
            ) { r in
                guard plan.mayStart(host: r.host) else { return .skipHost }
                let c = book.config(r.session)
                let policy = SessionPolicy(
                    allowMetered: c.allowMetered, discretionary: c.discretionary, perHostLimit: c.perHostLimit)
                guard
                    policy.mayStart(
                        metered: network.metered, powerSaver: network.powerSaver,
                        runningForHost: plan.running(session: r.session, host: r.host))
                else { return .skipTask }
                plan.started(host: r.host, session: r.session)
                return .take
            }
        } catch {
            log(.error, "cannot read the queue: \(error)")
            return
        }
        for r in next {
            let unstaged = r.kind == .upload || world.mayHaveStaged.map { !$0.contains(r.id) } == true
            let partial = unstaged ? 0 : ledger.stagedBytes(r.id)
            _ = try? withMachine(r.id, ledger, stored: r) { m, now in m.start(partialBytes: partial, now: now) }
        }
    }

    /// One wake for the earliest retry of all waiting tasks (none when nothing waits).
    mutating func armRetry(_ ledger: AgentLedger) {
        wakes.retryDueAt = nil
        wakes.fired(.retry)
        guard let at = try? ledger.earliestRetry(after: .min) else { return }
        wakes.retryDueAt = at
        wake(.retry, at: at)
    }

    mutating func retryDue(_ ledger: AgentLedger) {
        wakes.retryDueAt = nil
        let due = (try? ledger.dueRetries(now: now, limit: 1_000)) ?? []
        for r in due { _ = try? withMachine(r.id, ledger) { m, now in m.retryDue(now: now) } }
        // The due ones' changes are not in the store yet: look only beyond now.
        if due.count == 1_000 {
            wakes.retryDueAt = now
            wake(.retry, at: now)
        } else if let at = try? ledger.earliestRetry(after: now) {
            wake(.retry, noLaterThan: at, due: \.retryDueAt)
        }
        wake(.schedule)
    }

    /// A drive or share came (or went): the tasks waiting for their folder look again at once.
    mutating func mountsChanged(_ ledger: AgentLedger) {
        let waiting = (try? ledger.waiting(for: .folder)) ?? []
        for r in waiting { _ = try? withMachine(r.id, ledger) { m, now in m.retryDue(now: now) } }
        if !waiting.isEmpty { wake(.schedule) }
    }

    /// Any change (a route, an interface, a LAN) may make a waiting task's server reachable:
    /// they all try again at once, from their partial bytes. When the network comes or goes,
    /// running transfers restart too, on new connections (the old ones may lead nowhere).
    mutating func networkChanged(_ state: NetworkState, _ ledger: AgentLedger) {
        log(.info, state.available ? "world.network available" : "world.network changed; no default route")
        let flipped = world.networkKnown && world.network.available != state.available
        // Metered now, and the user does not allow that: what runs stops and waits.
        let refused = !settings.allowMetered && state.metered && !world.network.metered
        world.network = state
        world.networkKnown = true
        if flipped || refused {
            for id in tasks.attached.sorted() {
                _ = try? withMachine(id, ledger) { m, now in m.networkChanged(now: now) }
            }
            if flipped { out.append(.dropConnections) }
        }
        for r in (try? ledger.waitingForNetwork()) ?? [] {
            _ = try? withMachine(r.id, ledger) { m, now in m.networkReturned(now: now) }
        }
        wake(.schedule)
    }

    /// The store commits again: tasks it refused continue from their bytes.
    mutating func storeRecheck() {
        guard !tasks.storeBlocked.isEmpty else { return }
        out.append(.store(.requeueIfRunning(tasks.storeBlocked.sorted())))
        log(.info, "the store commits again: \(tasks.storeBlocked.count) task(s) continue")
        tasks.storeBlocked.removeAll()
        wake(.schedule)
    }

    // MARK: - Housekeeping

    /// Retention: ended tasks older than `keepEnded` leave the list (their files stay). Looked
    /// at when the agent starts and when a task ends, at most once an hour: no timer of its own,
    /// so an idle agent never wakes up for it.
    mutating func pruneEndedTasks(_ ledger: AgentLedger) {
        let keep = settings.keepEnded
        guard keep > 0, now - world.lastPrune >= 3_600_000_000 || world.lastPrune == 0 else { return }
        world.lastPrune = now
        do {
            let old = try ledger.endedTaskIDs(session: nil, updatedBefore: now - keep)
            guard !old.isEmpty else { return }
            try removeTasks(old, ledger)
            log(
                .info,
                "removed \(old.count) task(s) that ended more than \(keep / 86_400_000_000) day(s) ago from the list")
        } catch {
            log(.error, "cannot prune ended tasks: \(error)")
        }
    }

    /// Ended tasks leave the list; the user's files stay, kept partial and quarantined bytes go.
    /// All or nothing.
    mutating func removeTasks(_ ids: [Int64], _ ledger: AgentLedger) throws {
        var owners: [String: [Int64]] = [:], replies: [Bool: [String]] = [:]
        for id in ids {
            let r = try shownTask(id, ledger)
            guard r.state.isFinal, !tasks.finalizing.contains(id) else {
                throw FerryError(
                    .invalidState, "task \(id) is \(r.state.rawValue): cancel it before removing it from the list")
            }
            owners[app(ofSession: r.session), default: []].append(id)
            if let reply = r.replyFile { replies[!config(r.session).app.isEmpty, default: []].append(reply) }
        }
        out.append(.store(.deleteTasks(ids)))
        for (app, list) in owners.sorted(by: { $0.key < $1.key }) { out.append(.tasksRemoved(list, app: app)) }
        // the uploads' replies: the agent's, not the user's
        for (confined, files) in replies.sorted(by: { !$0.key && $1.key }) {
            out.append(.removeFiles(files, confined: confined))
        }
        for id in ids {
            out.append(.discardBytes(id))
            rememberMachine(id)
            tasks.machines[id] = nil
            user.spaceWarned.remove(id)
        }
    }

    /// A task as callers see it: live figures while it runs; waiting for space while the store
    /// refuses its changes.
    func shownTask(_ id: Int64, _ ledger: AgentLedger) throws -> TaskRecord {
        if let m = tasks.machines[id] { return m.record }
        guard let r = try ledger.task(id) else { throw FerryError(.noSuchTask, "no task with id \(id)") }
        return shown(r)
    }

    func shown(_ r: TaskRecord) -> TaskRecord {
        if let m = tasks.machines[r.id] { return m.record }
        guard tasks.storeBlocked.contains(r.id) else { return r }
        var w = r
        w.state = .waiting
        w.reason = .space
        w.error =
            "the agent cannot save its records (is the disk holding its state full?); the task continues when it can"
        return w
    }
}
