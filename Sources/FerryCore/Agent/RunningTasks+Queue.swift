/// When tasks run: starting what may, retries, the network and drives coming back, new tasks.
extension RunningTasks {
    /// Starts what may run. No gate on the network monitor: "no default route" is not
    /// "unreachable" (a LAN, loopback); attempts that cannot reach their server wait for it.
    /// `mayHaveStaged`: tasks that may have bytes in staging (nil: unknown, ask the ledger).
    mutating func schedule(_ ctx: TaskContext, mayHaveStaged: Set<Int64>?) -> TaskSteps {
        guard scheduler.freeSlots > 0, ctx.settings.allowMetered || !ctx.network.metered else { return TaskSteps() }
        var plan = scheduler
        // Sandboxed apps together keep one slot free for the user and host programs: an app's
        // queue of 10,000 on hosts that never answer cannot hold every transfer.
        // Counted at the first app's task met: the user's queue alone costs nothing.
        let appShare = max(1, scheduler.maxTotal - 1)
        var appsRunning: Int?
        let attached = attached, machines = machines
        let next: [TaskRecord]
        do {
            let network = ctx.network
            next = try ctx.ledger.nextQueued(
                limit: scheduler.freeSlots, excludingHosts: scheduler.fullHosts,
                excludingIDs: attached.union(storeBlocked).union(finalizing)
            ) { r in
                guard plan.mayStart(host: r.host) else { return .skipHost }
                let c = ctx.config(r.session)
                if !c.app.isEmpty {
                    let running =
                        appsRunning
                        ?? attached.count { id in machines[id].map { !ctx.app($0.record.session).isEmpty } ?? false }
                    appsRunning = running
                    if running >= appShare { return .skipSession }
                }
                let policy = SessionPolicy(
                    allowMetered: c.allowMetered, discretionary: c.discretionary, perHostLimit: c.perHostLimit)
                guard
                    policy.mayStart(
                        metered: network.metered, powerSaver: network.powerSaver,
                        runningForHost: plan.running(session: r.session, host: r.host))
                else { return .skipTask }
                plan.started(host: r.host, session: r.session)
                if !c.app.isEmpty { appsRunning? += 1 }
                return .take
            }
        } catch {
            return TaskSteps(effects: [.log(.error, "cannot read the queue: \(error)")])
        }
        var steps = TaskSteps()
        for r in next {
            let unstaged = r.kind == .upload || mayHaveStaged.map { !$0.contains(r.id) } == true
            let partial = unstaged ? 0 : ctx.ledger.stagedBytes(r.id)
            _ = try? step(r.id, ctx, stored: r, into: &steps) { m, now in m.start(partialBytes: partial, now: now) }
        }
        return steps
    }

    /// The wake for the earliest retry of a waiting task after `after` (none when nothing waits).
    func nextRetry(after: Int64, _ ledger: AgentLedger) -> [AgentEffect] {
        guard let at = try? ledger.earliestRetry(after: after) else { return [] }
        return [.wake(.retry, at: at)]
    }

    /// The retries due now run; the wake for the next.
    mutating func retryDue(_ ctx: TaskContext) -> TaskSteps {
        let due = (try? ctx.ledger.dueRetries(now: ctx.now, limit: 1_000)) ?? []
        var steps = stepEach(due.map(\.id), ctx) { m, now in m.retryDue(now: now) }.steps
        // The due ones' changes are not in the store yet: look only beyond now.
        steps.effects += due.count == 1_000 ? [.wake(.retry, at: ctx.now)] : nextRetry(after: ctx.now, ctx.ledger)
        steps.effects.append(.wake(.schedule, at: nil))
        return steps
    }

    /// A drive or share came (or went): the tasks waiting for their folder look again at once.
    mutating func mountsChanged(_ ctx: TaskContext) -> TaskSteps {
        let waiting = (try? ctx.ledger.waiting(for: .folder)) ?? []
        var steps = stepEach(waiting.map(\.id), ctx) { m, now in m.retryDue(now: now) }.steps
        if !waiting.isEmpty { steps.effects.append(.wake(.schedule, at: nil)) }
        return steps
    }

    /// Any change of the network (a route, an interface, a LAN) may make a waiting task's
    /// server reachable: they all try again at once, from their partial bytes. `restart`: the
    /// network came or went, or became one the user does not allow: running transfers stop
    /// (and start again, on new connections, when they may).
    mutating func networkChanged(restart: Bool, _ ctx: TaskContext) -> TaskSteps {
        var steps = TaskSteps()
        if restart { steps = stopAttached(ctx) }
        let waiting = (try? ctx.ledger.waitingForNetwork()) ?? []
        steps += stepEach(waiting.map(\.id), ctx) { m, now in m.networkReturned(now: now) }.steps
        steps.effects.append(.wake(.schedule, at: nil))
        return steps
    }

    /// What runs stops and waits for the network, from its bytes.
    mutating func stopAttached(_ ctx: TaskContext) -> TaskSteps {
        stepEach(attached.sorted(), ctx) { m, now in m.networkChanged(now: now) }.steps
    }

    /// New tasks' records as stored: their ids, session and times given; `timeout`s made
    /// deadlines; the session's rate limit where they set none.
    mutating func made(_ drafts: [TaskRecord], session: String, _ ctx: TaskContext) -> [TaskRecord] {
        var records = drafts
        let maxRate = ctx.config(session).maxRate
        for i in records.indices {
            lastTaskID += 1
            records[i].id = lastTaskID
            records[i].session = session
            records[i].created = ctx.now
            records[i].updated = ctx.now
            if let timeout = records[i].deadline { records[i].deadline = ctx.now + timeout }  // seconds from now
            if records[i].maxRate == nil, maxRate > 0 { records[i].maxRate = maxRate }
        }
        return records
    }

    /// The agent stops: running tasks' bytes are saved as they are.
    mutating func stopping(_ received: [Int64: Int64], now: Int64) -> [AgentEffect] {
        var effects: [AgentEffect] = []
        for (id, bytes) in received.sorted(by: { $0.key < $1.key }) {
            guard var m = machines[id] else { continue }
            _ = m.progressed(received: bytes, now: now)
            forget(id)
            effects.append(.store(.progress(m.record)))  // stored queued, as every running task
        }
        attached.removeAll()
        return effects
    }
}
