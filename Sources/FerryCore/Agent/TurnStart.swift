/// The core as it was when the open turn began. The core is copied whole (value semantics: a
/// field added later is restored too); only the event queues are left out of the copy, since
/// they roll back by sequence number (copying them would copy every queued event once per
/// turn), the machines, kept one by one as the turn first changes them (`TaskJournal`: copying
/// them all would copy every running task's record once per turn), and the hints of `World`,
/// which may be large and are never rolled back. What the turn did that a rollback cannot take
/// back is in the machines' journals (`RunningTasks.journal`, `SessionBook.lastSeqBeforeTurn`).
struct TurnStart: Sendable {
    /// One element: a struct cannot hold a value of its own type directly.
    let before: [AgentCore]

    init(_ core: AgentCore) {
        var copy = core
        copy.sessions.queues = [:]
        copy.tasks.machines = [:]
        copy.world = World()
        before = [copy]
    }
}

/// What the agent knows of the world around it: facts and hints that no rollback changes.
struct World: Sendable {
    var network = NetworkState()
    var networkKnown = false
    /// Tasks that may have bytes in staging: those there at the start, started or handed bytes
    /// since (nil: unknown, ask the ledger). Spares a stat(2) per start that almost always
    /// finds nothing.
    var mayHaveStaged: Set<Int64>?
    /// When ended tasks were last pruned.
    var lastPrune: Int64 = 0
}

extension SessionBook {
    /// After a rollback to this value: the queues as they are now, rolled back to `lastSeq`
    /// (their numbers are never reused), and who is connected and what was launched, which the
    /// shell did and cannot undo.
    mutating func carryOver(from current: SessionBook) {
        queues = current.queues
        rollBack(to: current.lastSeqBeforeTurn)
        clients = current.clients
        relaunch = current.relaunch
    }
}

extension RunningTasks {
    /// After a rollback to this value: transfers that ended and saves that finished during the
    /// turn are gone in the shell; a task the turn changed that is left without its transfer
    /// waits until the store commits again (its start, if the turn started it, never happens).
    mutating func carryOver(_ journal: TaskJournal) {
        attached.subtract(journal.detached)
        finalizing.subtract(journal.finalized)
        for id in journal.touched where !attached.contains(id) && !finalizing.contains(id) {
            machines[id] = nil
            storeBlocked.insert(id)
        }
        recountSlots()
    }
}
