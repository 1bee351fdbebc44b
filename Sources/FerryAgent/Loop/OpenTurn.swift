import FerryCore

/// The turn the loop has open: whether one is, the store's refusal within it, and the effects
/// that wait for its commit (a task's TaskChanged once, with its last state).
struct OpenTurn {
    var isOpen = false
    /// A store write of this turn failed: it cannot commit.
    var storeFailure: Error?
    /// Why the last turn that could not commit failed.
    var lastFailure: Error?
    /// The test seam that records what turns do (empty in a release build).
    var seam = CrashSeam()
    private var afterCommit: [AgentEffect] = []
    /// Where each task's TaskChanged waits in `afterCommit`.
    private var taskChangedAt: [Int64: Int] = [:]

    /// An effect for after the commit; a task's later TaskChanged replaces its earlier one.
    mutating func afterCommit(_ e: AgentEffect) {
        if case .taskChanged(let id, _, _) = e {
            if let i = taskChangedAt[id] { afterCommit[i] = e; return }
            taskChangedAt[id] = afterCommit.count
        }
        afterCommit.append(e)
    }

    /// The effects waiting for the commit, in order; none wait after.
    mutating func takeAfterCommit() -> [AgentEffect] {
        defer { afterCommit = []; taskChangedAt = [:] }
        return afterCommit
    }
}
