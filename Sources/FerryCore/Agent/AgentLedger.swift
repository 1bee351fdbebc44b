/// What the agent core may look up while it decides: the store's rows and the bytes staged on
/// disk. Read-only: every change goes out as an effect. The agent reads SQLite through it (inside
/// the turn's open transaction, so it sees the turn's own writes); the core's tests a dictionary.
public protocol AgentLedger {
    func task(_ id: Int64) throws -> TaskRecord?
    func session(_ identifier: String) throws -> SessionConfig?
    /// Tasks of these sessions (nil: all) with ids above `afterID`, ascending.
    func tasks(sessions: [String]?, afterID: Int64, limit: Int) throws -> [TaskRecord]
    /// Active tasks (not ended) by ascending id, or ended ones by descending id, from `offset`.
    func taskSection(sessions: [String]?, active: Bool, offset: Int, limit: Int) throws -> [TaskRecord]
    /// Queued tasks to start next, oldest first; `take` sorts each one (see `QueuePick`).
    func nextQueued(
        limit: Int, excludingHosts: Set<String>, excludingIDs: Set<Int64>,
        take: (TaskRecord) -> QueuePick
    ) throws -> [TaskRecord]
    func waitingForNetwork() throws -> [TaskRecord]
    /// Tasks waiting for this reason, by ascending id.
    func waiting(for reason: WaitReason) throws -> [TaskRecord]
    /// The earliest retry time of a waiting task later than `after`.
    func earliestRetry(after: Int64) throws -> Int64?
    func dueRetries(now: Int64, limit: Int) throws -> [TaskRecord]
    func endedTaskIDs(session: String?, updatedBefore: Int64) throws -> [Int64]
    func unfinishedTaskIDs(session: String) throws -> [Int64]
    /// Tasks in these states, of one session or all (nil), oldest first.
    func taskIDs(session: String?, states: Set<TaskState>) throws -> [Int64]
    func countsByState(sessions: [String]?) throws -> [String: Int]
    func finishedEvents(session: String) throws -> Int64
    /// Bytes of a task's partial download in staging (0 when there are none).
    func stagedBytes(_ id: Int64) -> Int64
    /// Bytes the unfinished downloads of these sessions that are not running hold in staging
    /// (queued, waiting, paused: their `received`); `running`: those that are, stored as queued.
    func heldInStaging(sessions: [String], excluding running: Set<Int64>) throws -> Int64
}

/// How the scheduler sorts a queued task: start it, leave it, or leave its whole host (or
/// session) for now, so one busy host, or an app at its share, cannot hide the others.
public enum QueuePick: Sendable { case take, skipTask, skipHost, skipSession }
