/// What the core asks the shell to do. Store writes run at once inside the turn's transaction;
/// wakes are armed at once; everything else waits until the turn committed (and is dropped if
/// it cannot commit), in the order given.
public enum AgentEffect: Sendable, Equatable {
    indirect case store(StoreWrite)
    case wake(AgentWake, at: Int64?)
    indirect case startTransfer(TaskRecord, TaskMachine.TransferPlan, stallSeconds: Int, credential: Credential?)
    case stopTransfer(Int64)
    /// What to do with a response's body (the transfer waits, paused, for this).
    case continueBody(Int64, TaskMachine.BodyDecision)
    /// Close cached connections: the network they ran over came or went.
    case dropConnections
    /// Running transfers' speed limits, bytes per second (0: none), by task (`SpeedLimits`).
    case speedLimits([Int64: Int64])
    /// Verify and move a finished download into place; nil directory: the user's Downloads folder.
    /// `confined`: a sandboxed app's, whose folder is opened along its resolved path with no
    /// link on the way (the app may have swapped one in since it was allowed).
    indirect case finalize(TaskRecord, defaultDirectory: String?, confined: Bool)
    /// Remove a task's kept partial or quarantined bytes (never a delivered file).
    case discardBytes(Int64)
    case quarantine(Int64)
    /// Resume data adopted another task's staging bytes.
    case adoptStagedBytes(from: Int64, to: Int64)
    /// `confined`: files in a folder a sandboxed app controls, removed through that folder
    /// opened with no link on the way (the app may have swapped one in).
    case removeFiles([String], confined: Bool)
    /// Keep a credential in the user's keyring (the Secret Service), replacing one under that key.
    indirect case keepCredential(CredentialKey, Credential)
    /// Ask the keyring for the first of these it has; the answer comes as `credentialFound`.
    case findCredential(task: Int64, [CredentialKey])
    indirect case forgetCredential(CredentialKey)
    /// An invalidated session's cookies go: its cookie file and what the agent holds of it.
    case forgetCookies(String)
    /// The signals. `app`: the sandboxed app the tasks or session belong to (only it and the
    /// host's programs hear of them); empty for the host's own, which everyone may hear.
    case taskChanged(Int64, TaskState, app: String)
    case tasksRemoved([Int64], app: String)
    /// Running tasks' bytes, for live views (TasksProgressed).
    case tasksProgressed([TaskProgress], app: String)
    case eventsAvailable(session: String, latest: UInt64, app: String)
    case popup(PopupPlan.Outcome)
    case launcherChanged
    case launch(session: String, LaunchTarget)
    case log(LogLevel, String)
}

public struct TaskProgress: Sendable, Equatable {
    public var task: Int64
    public var received: Int64
    /// -1: unknown.
    public var expected: Int64
    public init(task: Int64, received: Int64, expected: Int64) {
        self.task = task; self.received = received; self.expected = expected
    }
}

public enum LogLevel: Sendable, Equatable { case debug, info, warning, error }

/// One change to the store; a turn's changes commit together.
public enum StoreWrite: Sendable, Equatable {
    case insert([TaskRecord])
    /// A task's row (its session is the one it was made with: that never changes).
    case update(TaskRecord)
    /// A running task's row (its bytes, validators, names): what indexes and counts are kept by
    /// (session, host, state) is left as stored (queued: a start writes no row), so SQLite
    /// touches the row alone.
    case progress(TaskRecord)
    case deleteTasks([Int64])
    case appendEvent(session: String, QueuedEvent)
    case reserveSeq(session: String, UInt64)
    case deleteEvents(session: String, upTo: UInt64)
    case saveSession(String, SessionConfig)
    case finishedEvents(session: String, at: Int64)
    case badge(Int)

    /// A running task's checkpoint (its headers came, its bytes moved): the turn
    /// need not wait for the disk for it. A power cut may lose it without harm: the task comes
    /// back queued and measures its staged bytes again, and without the validators that came
    /// with them it starts over (see TaskMachine.start). Everything else is durable before the
    /// turn's effects: replies, events, completions, failures, pauses.
    public var isCheckpoint: Bool {
        switch self {
        case .update(let r): return r.state == .running
        case .progress: return true
        default: return false
        }
    }
}

/// A session as GetSession shows it.
public struct SessionInfo: Sendable, Equatable {
    public var identifier: String
    public var configuration: SessionConfig
    public var clients: Int
    public var pendingEvents: Int
    public var latestSeq: UInt64
    public var relaunch: String
    public var finishedEvents: Int64
    public init(
        identifier: String, configuration: SessionConfig, clients: Int, pendingEvents: Int, latestSeq: UInt64,
        relaunch: String, finishedEvents: Int64
    ) {
        self.identifier = identifier; self.configuration = configuration; self.clients = clients
        self.pendingEvents = pendingEvents; self.latestSeq = latestSeq; self.relaunch = relaunch;
        self.finishedEvents = finishedEvents
    }
}
