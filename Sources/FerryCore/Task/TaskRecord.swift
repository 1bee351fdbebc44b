/// Everything the agent knows about one task: what the store keeps and the API shows.
public struct TaskRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case download, upload }

    public var id: Int64
    public var session: String
    public var kind: Kind = .download
    public var url: String
    /// HTTP method (nil = the kind's default: GET for downloads, PUT for uploads).
    public var method: String? = nil
    /// The file whose contents an upload sends.
    public var uploadFile: String? = nil
    public var host: String
    public var state: TaskState
    public var reason: WaitReason?
    /// Bytes of the body on disk (staging) or in the final file.
    public var received: Int64
    /// Total size when the server said it (nil = unknown).
    public var expected: Int64?
    /// Validators of the entity the partial bytes came from (for If-Range). For an upload of a
    /// path, `lastModified` is the file's modification time when it was queued (see UploadSource).
    public var etag: String?
    public var lastModified: String?
    /// Destination: an exact path (`output`) or a folder (`directory`); nil = the default folder.
    public var directory: String?
    public var output: String?
    /// The final path, once completed.
    public var file: String?
    /// A file name the server suggested (Content-Disposition), unsanitised.
    public var suggestedName: String?
    public var sha256: String?
    public var description: String
    public var headers: [String: String]
    public var error: String?
    public var errorName: String?
    /// Consecutive failed attempts without progress (drives the backoff).
    public var attempts: Int
    /// When a waiting(retry) task may run again, microseconds since the epoch.
    public var retryAt: Int64?
    public var created: Int64
    public var updated: Int64
    /// Among queued tasks the higher starts first (0 to 1, URLSessionTask.priority); a running
    /// task is never stopped for a higher one.
    public var priority: Double = 0.5
    /// This task's own speed limit, bytes per second (nil: only the user's limits).
    public var maxRate: Int64?
    /// Give up after this many failed attempts in a row (nil: retry until the deadline).
    public var maxAttempts: Int?
    /// Give up when a retry would come after this moment (µs since the epoch; nil: only the
    /// session's resource timeout).
    public var deadline: Int64?
    /// An upload's reply: the server's response body, kept in the session's inbox (at most
    /// `TaskRecord.replyLimit` bytes; `replyCut` when there was more), and its HTTP status.
    public var replyFile: String?
    public var replyStatus: Int?
    public var replyCut = false
    /// The reply's header fields, names in lower case (repeated ones joined with ", "), without
    /// Set-Cookie: a credential, which the session's cookie jar keeps if anything does.
    public var replyHeaders: [String: String]?
    public static let replyLimit: Int64 = 1 << 20
    /// An upload sent with a resumable protocol, and the upload resource the server made for
    /// it (recorded before any body byte is sent: an interrupted upload asks it for its offset).
    public var resumable: ResumableProtocol?
    public var uploadURL: String?
    /// A download whose server labels a compressed file as content-encoded: saved as sent
    /// (see ContentCoding), learnt from a response and kept for later attempts.
    public var keepsEncoding = false

    public init(
        id: Int64 = 0, session: String, url: String, host: String, state: TaskState = .queued,
        reason: WaitReason? = nil, received: Int64 = 0, expected: Int64? = nil,
        etag: String? = nil, lastModified: String? = nil, directory: String? = nil,
        output: String? = nil, file: String? = nil, suggestedName: String? = nil,
        sha256: String? = nil, description: String = "", headers: [String: String] = [:],
        error: String? = nil, errorName: String? = nil, attempts: Int = 0,
        retryAt: Int64? = nil, created: Int64 = 0, updated: Int64 = 0
    ) {
        self.id = id; self.session = session; self.url = url; self.host = host
        self.state = state; self.reason = reason; self.received = received; self.expected = expected
        self.etag = etag; self.lastModified = lastModified; self.directory = directory
        self.output = output; self.file = file; self.suggestedName = suggestedName
        self.sha256 = sha256; self.description = description; self.headers = headers
        self.error = error; self.errorName = errorName; self.attempts = attempts
        self.retryAt = retryAt; self.created = created; self.updated = updated
    }

    public var effectiveMethod: String { method ?? (kind == .upload ? "PUT" : "GET") }

    /// The validator to send in If-Range: a strong ETag, else Last-Modified. None with a weak
    /// ETag (RFC 9110 §13.1.5: no date when there is an entity tag, and a weak one says two
    /// responses may differ in bytes): such a download starts over.
    public var resumeValidator: String? {
        if let etag { return etag.hasPrefix("W/") ? nil : etag }
        return lastModified
    }
}
