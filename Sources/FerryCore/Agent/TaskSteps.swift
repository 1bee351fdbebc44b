/// What the router hands `RunningTasks` with an event: the time, the store, and what the
/// agent's other machines know that a task's step reads (never changes).
public struct TaskContext {
    let now: Int64
    let ledger: AgentLedger
    let settings: AgentCore.Settings
    /// Every session's configuration (`SessionBook.configs`).
    let configs: [String: SessionConfig]
    let network: NetworkState

    func config(_ session: String) -> SessionConfig { configs[session] ?? SessionConfig() }
    /// The sandboxed app a session belongs to ("" for the host's).
    func app(_ session: String) -> String { configs[session]?.app ?? "" }
    func rules(_ session: String) -> SessionRules {
        SessionRules(session: session, config: config(session), settings: settings)
    }
}

/// What tasks' steps return: the agent's effects, and notes for the agent's other machines,
/// which the router hands to their owners (`SessionBook`, `UserDelivery`, `CredentialBook`).
struct TaskSteps: Sendable {
    var effects: [AgentEffect] = []
    var notes: [TaskNote] = []
    /// The task's state after the last step (nil: none ran).
    var state: TaskState?
    /// Some effect starts a transfer (the router gives it its credentials): the effects are
    /// looked through only then (reading one copies the record it carries).
    var startsTransfer = false
    /// A transfer was attached or detached (the speed limits are shared again).
    var transfersChanged = false

    /// Appends `rhs`'s; into empty steps by taking them whole (copying an effect would retain
    /// every field of the record it carries).
    static func += (lhs: inout TaskSteps, rhs: consuming TaskSteps) {
        if lhs.effects.isEmpty && lhs.notes.isEmpty {
            let (state, starts, changed) = (lhs.state, lhs.startsTransfer, lhs.transfersChanged)
            lhs = rhs
            if lhs.state == nil { lhs.state = state }
            lhs.startsTransfer = lhs.startsTransfer || starts
            lhs.transfersChanged = lhs.transfersChanged || changed
            return
        }
        lhs.effects += rhs.effects
        lhs.notes += rhs.notes
        if let s = rhs.state { lhs.state = s }
        lhs.startsTransfer = lhs.startsTransfer || rhs.startsTransfer
        lhs.transfersChanged = lhs.transfersChanged || rhs.transfersChanged
    }
}

/// A task's step, as another machine hears of it.
enum TaskNote: Sendable {
    /// An event for the task's session (SessionBook), and the user (UserDelivery: a popup,
    /// the badge) when the session shows popups. `record`: the task's, for what the user is
    /// told when it needs more than the event (`UserDelivery.needsRecord`; nil otherwise: no
    /// copy of the record for each event).
    case event(session: String, task: Int64, SessionEvent, record: TaskRecord?)
    /// The task waits for disk space: the user hears of it once (when its session shows popups).
    case noSpace(TaskRecord)
    /// The task no longer waits for space (it ended, was paused, waits for something else).
    case spaceWaitOver(Int64)
    /// It ended: what it alone held goes (CredentialBook), a warning of no space is forgotten.
    case ended(id: Int64, created: Int64, host: String)
}
