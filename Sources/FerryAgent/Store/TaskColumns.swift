import FerryCore
import FoundationEssentials

/// A task row by position (no per-value boxing or lookup by name): the current row of a
/// statement selecting `Store.taskColumns` as a TaskRecord, and a TaskRecord bound to the
/// parameters of the store's INSERT and UPDATE.
enum TaskColumns {
    static func record(_ row: SQLiteRow) -> TaskRecord {
        let headersJSON = row.text(16)
        let headers =
            headersJSON == "{}" || headersJSON.isEmpty
            ? [:]
            : (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8))) ?? [:]
        var r = TaskRecord(
            id: row.int(0), session: row.text(1), url: row.text(2), host: row.text(3),
            state: TaskState(rawValue: row.text(4)) ?? .failed,
            reason: row.optionalText(5).flatMap(WaitReason.init(rawValue:)),
            received: row.int(6), expected: row.optionalInt(7), etag: row.optionalText(8),
            lastModified: row.optionalText(9), directory: row.optionalText(10), output: row.optionalText(11),
            file: row.optionalText(12), suggestedName: row.optionalText(13), sha256: row.optionalText(14),
            description: row.text(15), headers: headers, error: row.optionalText(17), errorName: row.optionalText(18),
            attempts: Int(row.int(19)), retryAt: row.optionalInt(20), created: row.int(21), updated: row.int(22))
        r.kind = TaskRecord.Kind(rawValue: row.text(23)) ?? .download
        r.method = row.optionalText(24)
        r.uploadFile = row.optionalText(25)
        r.priority = row.double(26)
        r.maxRate = row.optionalInt(27)
        r.maxAttempts = row.optionalInt(28).map { Int($0) }
        r.deadline = row.optionalInt(29)
        r.replyFile = row.optionalText(30)
        r.replyStatus = row.optionalInt(31).map { Int($0) }
        r.replyCut = row.int(32) != 0
        r.resumable = row.optionalText(33).flatMap(ResumableProtocol.init(rawValue:))
        r.uploadURL = row.optionalText(34)
        r.replyHeaders = row.optionalText(35).flatMap {
            try? JSONDecoder().decode([String: String].self, from: Data($0.utf8))
        }
        r.keepsEncoding = row.int(36) != 0
        return r
    }

    /// The key columns a statement sets: an INSERT all (session, host, state); an UPDATE all but
    /// the session, or none (a running task's progress).
    enum Keys { case all, allButSession, none }

    /// Binds `r`'s columns in the order of the store's INSERT and UPDATE (session … upload_file),
    /// the keys left out as `keys` says, then its id, and runs the statement to its end.
    static func execute(_ statement: SQLiteStatement, binding r: TaskRecord, keys: Keys = .all) throws {
        try statement.run { bind(&$0, r, keys: keys) }
    }

    /// Binds several rows to a statement with as many rows of parameters (INSERT … VALUES (…), (…)).
    static func execute(_ statement: SQLiteStatement, binding rows: ArraySlice<TaskRecord>) throws {
        try statement.run { b in for r in rows { bind(&b, r, keys: .all) } }
    }

    /// The columns a task row has besides its id, in the order `bind` binds them and `record`
    /// reads them after the id: the one list the store's SELECT, INSERT and UPDATE are made from
    /// (a new column: here, in `bind` and `record`, and in a migration).
    static let names = [
        "session", "url", "host", "state", "reason", "received", "expected", "etag", "last_modified",
        "directory", "output", "file", "suggested_name", "sha256", "description", "headers", "error", "error_name",
        "attempts", "retry_at", "created", "updated", "kind", "method", "upload_file", "priority", "max_rate",
        "max_attempts", "deadline", "reply_file", "reply_status", "reply_cut", "resumable", "upload_url",
        "reply_headers", "keeps_encoding",
    ]

    /// The columns the key columns are (`Keys` leaves them out of an UPDATE).
    static let session = "session", keyColumns: Set<String> = ["host", "state"]

    /// How many parameters `bind` takes with every key (the columns and the id).
    static let count = names.count + 1

    /// The SELECT list `record` reads: the id, then `names`.
    static let selectList = (["id"] + names).joined(separator: ", ")

    /// The INSERT's column list (`names`, then the id), as `bind` binds them.
    static let insertList = (names + ["id"]).joined(separator: ", ")

    /// The UPDATE's SET clause for `keys` (never the session; without host and state for `.none`).
    static func setClause(_ keys: Keys) -> String {
        names.filter { $0 != session && (keys != .none || !keyColumns.contains($0)) }.map { "\($0)=?" }
            .joined(separator: ", ")
    }

    private static func bind(_ b: inout SQLiteBinder, _ r: TaskRecord, keys: Keys) {
        if keys == .all { b.add(r.session) }
        b.add(r.url)
        if keys != .none { b.add(r.host); b.add(r.state.rawValue) }
        b.add(r.reason?.rawValue)
        b.add(r.received); b.add(r.expected); b.add(r.etag); b.add(r.lastModified); b.add(r.directory)
        b.add(r.output); b.add(r.file); b.add(r.suggestedName); b.add(r.sha256); b.add(r.description)
        b.add(Store.headersJSON(r.headers)); b.add(r.error); b.add(r.errorName); b.add(r.attempts); b.add(r.retryAt)
        b.add(r.created); b.add(r.updated); b.add(r.kind.rawValue); b.add(r.method); b.add(r.uploadFile)
        b.add(r.priority); b.add(r.maxRate); b.add(r.maxAttempts.map { Int64($0) }); b.add(r.deadline)
        b.add(r.replyFile); b.add(r.replyStatus.map { Int64($0) }); b.add(Int64(r.replyCut ? 1 : 0))
        b.add(r.resumable?.rawValue); b.add(r.uploadURL); b.add(r.replyHeaders.map(Store.headersJSON))
        b.add(Int64(r.keepsEncoding ? 1 : 0))
        b.add(r.id)
    }
}
