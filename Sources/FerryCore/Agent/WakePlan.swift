/// Which of the agent's wakes are armed in the shell (it keeps one of each) and when the two
/// that stand for many moments (retries, stalls) are due. A fact of the shell, not of the
/// store: a turn that cannot commit does not disarm what it armed.
struct WakePlan: Sendable, Equatable {
    private(set) var armed: Set<AgentWake> = []
    /// When the armed retry wake is due (the earliest waiting task's retry).
    var retryDueAt: Int64?
    /// When the armed stall wake is due (the earliest moment a transfer may have stalled).
    var stallDueAt: Int64?

    /// The effect that arms `wake` at `at` (nil: when the loop is idle), or nil when it is armed.
    mutating func arm(_ wake: AgentWake, at: Int64? = nil) -> AgentEffect? {
        guard armed.insert(wake).inserted else { return nil }
        return .wake(wake, at: at)
    }

    /// One wake for the earliest of many moments: arms it for `at` unless it is due no later
    /// already; `due` remembers when it is due.
    mutating func arm(_ wake: AgentWake, noLaterThan at: Int64, due: WritableKeyPath<WakePlan, Int64?>) -> AgentEffect?
    {
        if let current = self[keyPath: due], current <= at { return nil }
        self[keyPath: due] = at
        armed.remove(wake)
        return arm(wake, at: at)
    }

    /// The shell fired it: it may be armed again.
    mutating func fired(_ wake: AgentWake) { armed.remove(wake) }
}
