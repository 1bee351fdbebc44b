/// The tasks the agent holds in memory — those running, being saved, or left without their
/// transfer by a store that cannot commit — and the scheduler's slots they take. Every other
/// task lives in the store (read through the ledger). A machine: each event goes in with a
/// `TaskContext` and comes back as `TaskSteps` (RunningTasks+Step, +Transfers, +Queue).
struct RunningTasks: Sendable {
    var scheduler: Scheduler
    /// Machines of running tasks (and of tasks being saved).
    var machines: [Int64: TaskMachine] = [:]
    /// Tasks with a transfer attached in the shell.
    var attached: Set<Int64> = []
    /// Tasks whose file is being verified and moved into place.
    var finalizing: Set<Int64> = []
    /// Tasks whose last change the store refused: they wait until it commits again.
    var storeBlocked: Set<Int64> = []
    /// Attached transfers' stall watches (a hint: a lost one is made again at the next check).
    var stallWatches: [Int64: StallWatch] = [:]
    /// The highest task id given out.
    var lastTaskID: Int64 = 0
    /// What the open turn did to tasks (see `TaskJournal`).
    var journal = TaskJournal()
    /// What live views have not heard of yet (the launcher wake tells them).
    var live = LiveChanges()
    /// Attached tasks with a speed limit of their own (`SpeedLimits` shares around them).
    var capped: Set<Int64> = []

    init(maxTotal: Int, maxPerHost: Int) { scheduler = Scheduler(maxTotal: maxTotal, maxPerHost: maxPerHost) }

    /// A transfer was started for the task: it takes its slots and is watched for a stall.
    mutating func attach(_ r: TaskRecord, stall: StallWatch) {
        attached.insert(r.id)
        if (r.maxRate ?? 0) > 0 { capped.insert(r.id) }
        scheduler.started(host: r.host, session: r.session)
        stallWatches[r.id] = stall
    }

    /// The task's transfer is gone (ended, stopped, could not start): its slots are free.
    /// Its record when it was attached.
    @discardableResult
    mutating func detach(_ id: Int64) -> TaskRecord? {
        stallWatches[id] = nil
        capped.remove(id)
        guard attached.remove(id) != nil, let r = machines[id]?.record else { return nil }
        scheduler.stopped(host: r.host, session: r.session)
        return r
    }

    /// The scheduler's slots made again from what is attached (after memory was put back).
    mutating func recountSlots() {
        var s = Scheduler(maxTotal: scheduler.maxTotal, maxPerHost: scheduler.maxPerHost)
        for id in attached { if let r = machines[id]?.record { s.started(host: r.host, session: r.session) } }
        scheduler = s
        capped.formIntersection(attached)
    }

    /// A task as callers see it (`shown`), by id.
    func shownTask(_ id: Int64, _ ledger: AgentLedger) throws -> TaskRecord {
        if let m = machines[id] { return m.record }
        guard let r = try ledger.task(id) else { throw FerryError(.noSuchTask, "no task with id \(id)") }
        return shown(r)
    }

    /// A task as callers see it: live figures while it runs; waiting for space while the store
    /// refuses its changes.
    func shown(_ r: TaskRecord) -> TaskRecord {
        if let m = machines[r.id] { return m.record }
        guard storeBlocked.contains(r.id) else { return r }
        var w = r
        w.state = .waiting
        w.reason = .space
        w.error =
            "the agent cannot save its records (is the disk holding its state full?); the task continues when it can"
        return w
    }

    /// Tasks by state as callers see them, from the store's counts (for `sessions`, nil: all):
    /// the store keeps a running task queued (see `carryOut`), memory knows it runs.
    func shownCounts(_ stored: [String: Int], _ sessions: [String]?) -> [String: Int] {
        var counts = stored
        for m in machines.values where m.record.state == .running {
            guard sessions?.contains(m.record.session) ?? true else { continue }
            counts[TaskState.queued.rawValue, default: 0] -= 1
            counts[TaskState.running.rawValue, default: 0] += 1
        }
        return counts.filter { $0.value > 0 }
    }

    /// The ids of the tasks that run (the store has their rows as queued).
    var runningIDs: Set<Int64> { Set(machines.compactMap { $0.value.record.state == .running ? $0.key : nil }) }

    /// The attached transfers that moved no byte for their limit, and when the next may stall.
    /// A watch lost with a turn that could not commit starts again from `now`.
    mutating func stalls(now: Int64, defaultLimit: Int64) -> (stalled: [(Int64, StallWatch)], next: Int64?) {
        var stalled: [(Int64, StallWatch)] = [], next: Int64?
        for id in attached.sorted() {
            let watch =
                stallWatches[id]
                ?? StallWatch(lastMoved: now, limit: defaultLimit, offset: machines[id]?.record.received ?? 0)
            stallWatches[id] = watch
            if now - watch.lastMoved >= watch.limit {
                stalled.append((id, watch))
            } else {
                next = min(next ?? .max, watch.lastMoved + watch.limit)
            }
        }
        return (stalled, next)
    }
}

/// What the open turn did to tasks that a rollback must know: the machines it changed (as they
/// were before), and what the shell did meanwhile that cannot be taken back.
struct TaskJournal: Sendable {
    /// Tasks whose machine the turn changed.
    var touched: Set<Int64> = []
    /// Each machine the turn changed or removed, as it was before (nil: none in memory).
    var machinesBefore: [Int64: TaskMachine?] = [:]
    /// Transfers that ended and saves that finished during the turn: gone in the shell.
    var detached: Set<Int64> = [], finalized: Set<Int64> = []
    /// Completed in the turn: their staged bytes are gone once it commits (not before).
    var completed: Set<Int64> = []
    /// The files the turn completed, logged once it commits (`AgentCore.committed`).
    var saved: [SavedFile] = []

    init() { machinesBefore.reserveCapacity(8) }  // a turn touches a few: no regrowing of big values
}

/// A transfer that moves no byte for its stall time (the agent's `--stall-timeout`, or a
/// session's shorter request timeout) is stopped and counts as a failed attempt, retried from
/// the bytes it kept (`TransferOutcome.stalled`), as curl's own speed check would. One wake at
/// the earliest moment any transfer may have stalled: curl's check wakes every transfer once a
/// second (with 500 running, 500 rounds and 1,400 polls a second).
public struct StallWatch: Sendable, Equatable {
    /// When a byte last moved (µs), or when the attempt began.
    var lastMoved: Int64
    /// How long it may go without one (µs).
    var limit: Int64
    /// Where the attempt began (bytes kept before it).
    var offset: Int64
}
