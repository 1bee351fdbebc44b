/// Everything that happens to the agent, as the core sees it: one value per happening.
public enum AgentInput: Sendable {
    /// The agent started: what the store holds besides tasks.
    case started(AgentStartState)
    /// A response's headers arrived and its body began (read after curl returned).
    indirect case responseBegan(task: Int64, ResponseHead)
    case progressed(task: Int64, received: Int64)
    /// A download of no announced length wrote a few more MiB: the state disk's free space now.
    case stagingSpace(task: Int64, received: Int64, DiskSpace)
    /// A plain upload's server named its upload resource in a 104 interim answer (IETF draft).
    case uploadResourceAnnounced(task: Int64, location: String)
    /// An attempt ended; `received` counts the bytes on disk.
    indirect case transferEnded(task: Int64, received: Int64, TransferOutcome)
    /// The shell could not even begin the attempt (the staging file, its disk space).
    indirect case transferCouldNotStart(task: Int64, TransferOutcome)
    case finalized(task: Int64, FinalizeResult)
    /// Something the core asked to be woken for (`AgentEffect.wake`).
    case wake(AgentWake)
    case networkChanged(NetworkState)
    /// A file system was mounted or unmounted (a drive plugged in, a share back).
    case mountsChanged
    /// A bus peer left (exited, crashed, closed its connection).
    case peerLeft(String)
    case appLaunched(session: String, pid: Int32)
    case appLaunchFailed(session: String, message: String)
    case appExited(session: String, status: Int32)
    /// The user clicked one of our popups: they have looked, the badge resets.
    /// The user clicked a popup; `appSession`: one of a sandboxed app's, which is started.
    case popupActivated(appSession: String?)
    /// The user changed the agent's settings while it runs.
    indirect case settingsChanged(AgentCore.Settings)
    /// The keyring's answer to `findCredential` (nil: it had none, or could not be asked).
    case credentialFound(task: Int64, Credential?)
    /// The agent stops: running transfers were detached with these bytes on disk. Their tasks
    /// stay "running" in the store; the next start queues them again.
    case stopping(received: [Int64: Int64])
}

public struct AgentStartState: Sendable {
    public var queues: [String: EventQueue]
    public var sessions: [String: SessionConfig]
    public var badge: Int
    public var lastTaskID: Int64
    public var network: NetworkState
    /// The tasks with a file in staging (nil: not looked; every start asks the ledger).
    public var staged: Set<Int64>?
    /// Tasks an older agent stored with user:password in their URL: moved out at the start.
    public var urlCredentials: [TaskRecord] = []
    public init(
        queues: [String: EventQueue], sessions: [String: SessionConfig], badge: Int, lastTaskID: Int64,
        network: NetworkState, staged: Set<Int64>? = nil
    ) {
        self.queues = queues; self.sessions = sessions; self.badge = badge; self.lastTaskID = lastTaskID;
        self.network = network
        self.staged = staged
    }
}

public struct NetworkState: Sendable, Equatable {
    /// A default route exists (GNetworkMonitor's "available").
    public var available: Bool
    public var metered: Bool
    public var powerSaver: Bool
    public init(available: Bool = true, metered: Bool = false, powerSaver: Bool = false) {
        self.available = available; self.metered = metered; self.powerSaver = powerSaver
    }
}

/// How verifying and moving a finished file into place went (the file worker's answer).
public enum FinalizeResult: Sendable, Equatable {
    /// In place at `path`; `cleanup` names go once the completion is committed.
    case saved(path: String, cleanup: [String])
    case noSpace(String)
    /// The destination folder is missing or unwritable: the bytes stay, the task waits for it.
    case folderMissing(String)
    case checksumMismatch(String)
    case failed(name: String, message: String)
}

/// What the core asks to be woken for; the shell keeps at most one pending wake of each.
public enum AgentWake: Hashable, Sendable {
    /// Start what may run (when the loop is idle, after a burst of changes).
    case schedule
    /// Tell clients their sessions have new events (coalesced per loop turn).
    case signals
    /// The earliest retry of a waiting task is due.
    case retry
    /// Tasks wait for the store to commit again.
    case storeRecheck
    /// Docks hear the overall progress at most twice a second.
    case launcher
    /// A session's app may be relaunched again (backoff), or may now be needed.
    case relaunch(String)
    /// Shortly after start: sessions whose events waited across a restart may need their app.
    case pendingLaunches
    /// Retention: look for ended tasks old enough to leave the list.
    case prune
    /// The earliest moment a running transfer may have stalled (no byte for its stall time).
    case stall
    /// Look at what each transfer moved and share the speed limits again (each second while
    /// a limit applies to something running).
    case rates
}

/// A user name and password: an app's answer to a challenge, or what a URL carried (memory
/// and the keyring only, never the store or a log).
public struct Credential: Sendable, Equatable {
    public var user: String
    public var password: String
    public init(user: String, password: String) { self.user = user; self.password = password }
}

/// The headers of the response a transfer's body comes from.
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public var contentRangeStart: Int64?
    public var totalLength: Int64?
    public var etag: String?
    public var lastModified: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentType: String?
    /// A download's: the state disk's free space as the head came (its staging file is there).
    public var stagingSpace: DiskSpace?
    /// The URL the response came from, when redirects led away from the task's (nil otherwise).
    public var finalURL: String?
    /// The body went on without waiting for the core (its plan's `BodyGoAhead` allowed it).
    public var wentAhead = false
    /// The attempt's end came in the same batch of reports as this head: the bytes it ended with.
    public var endedWith: Int64?
    public init(
        status: Int, contentRangeStart: Int64? = nil, totalLength: Int64? = nil, etag: String? = nil,
        lastModified: String? = nil, contentDisposition: String? = nil,
        contentEncoding: String? = nil, contentType: String? = nil, stagingSpace: DiskSpace? = nil,
        finalURL: String? = nil
    ) {
        self.status = status; self.contentRangeStart = contentRangeStart; self.totalLength = totalLength
        self.etag = etag; self.lastModified = lastModified; self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding; self.contentType = contentType; self.stagingSpace = stagingSpace
        self.finalURL = finalURL
    }
}
