/// The options of a new task (CreateDownload, CreateDownloads, CreateDownloadFromResumeData,
/// CreateUpload) as a client gave them; `TaskDraft` turns them into a task. Their keys on the
/// bus (`Key`) are generated from the XML in FerryBus.
public struct TaskOptions: Sendable, Equatable {
    public var directory: String?
    public var output: String?
    public var sha256: String?
    public var description: String?
    public var headers: [String: String]?
    public var paused: Bool?
    public var method: String?
    /// Not before this moment (µs since the epoch): the task waits with reason `scheduled`.
    public var earliestBegin: Int64?
    /// 0 to 1 (default 0.5): among queued tasks the higher starts first.
    public var priority: Double?
    /// This task's speed limit, bytes per second (0: none; default: its session's).
    public var maxRate: Int64?
    /// Fail after this many failed attempts in a row (0: no limit).
    public var maxAttempts: Int?
    /// Fail when a retry would come more than this many seconds after the task was made.
    public var timeout: Int?
    /// An upload's resumable protocol: "auto" (the default: ask the server), "tus" (tus 1.0),
    /// "ietf" (the IETF draft Resumable Uploads for HTTP) or "none".
    public var resumable: String?
    public init() {}
}
