import FerryCore
import Foundation
import GRDB

/// The agent's durable state in SQLite (WAL, synchronous=FULL: a commit survives a power cut).
/// Every SQL statement of the agent lives in this file.
final class Store {
    let path: String
    private let queue: DatabaseQueue
    /// The connection of the open batch (see `batch`), used by every call until it commits.
    private var openBatch: Database?

    init(path: String) throws {
        self.path = path
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try DatabaseQueue(path: path, configuration: config)
        try Self.migrator.migrate(queue)
    }

    /// Runs `body` in one transaction: a task's new state and the events it emits commit
    /// together or not at all (a crash between them would lose an event or repeat one).
    /// Calls inside join the transaction; a nested batch is part of the outer one.
    func batch<T>(_ body: () throws -> T) throws -> T {
        assert(!CurlMulti.insideCurl, "a store write inside a curl callback")
        if openBatch != nil { return try body() }
        return try queue.write { db in
            openBatch = db
            defer { openBatch = nil }
            return try body()
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        if let db = openBatch { return try body(db) }
        return try queue.read(body)
    }

    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        assert(!CurlMulti.insideCurl, "a store write inside a curl callback")
        if let db = openBatch { return try body(db) }
        return try queue.write(body)
    }

    /// A new request is acknowledged only once durable: when SQLite cannot commit it, the
    /// caller hears so by name (StoreUnavailable), and nothing was queued.
    private func recording<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as DatabaseError {
            throw FerryError(.storeUnavailable, "cannot record \(what): \(e.message ?? "SQLite error \(e.resultCode.rawValue)") (\(path)); nothing was queued")
        }
    }

    /// Versioned schema: add a migration, never edit a shipped one.
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE sessions(
                    identifier TEXT PRIMARY KEY NOT NULL,
                    config TEXT NOT NULL,
                    last_seq INTEGER NOT NULL DEFAULT 0,
                    created INTEGER NOT NULL);
                CREATE TABLE tasks(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    session TEXT NOT NULL,
                    kind TEXT NOT NULL DEFAULT 'download',
                    url TEXT NOT NULL,
                    host TEXT NOT NULL,
                    state TEXT NOT NULL,
                    reason TEXT,
                    received INTEGER NOT NULL DEFAULT 0,
                    expected INTEGER,
                    etag TEXT,
                    last_modified TEXT,
                    directory TEXT,
                    output TEXT,
                    file TEXT,
                    suggested_name TEXT,
                    sha256 TEXT,
                    description TEXT NOT NULL DEFAULT '',
                    headers TEXT NOT NULL DEFAULT '{}',
                    error TEXT,
                    error_name TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    retry_at INTEGER,
                    created INTEGER NOT NULL,
                    updated INTEGER NOT NULL);
                CREATE INDEX tasks_by_state ON tasks(state, id);
                CREATE INDEX tasks_by_session ON tasks(session, id);
                CREATE TABLE events(
                    session TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    task INTEGER NOT NULL,
                    event TEXT NOT NULL,
                    PRIMARY KEY(session, seq)) WITHOUT ROWID;
                CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                """)
        }
        m.registerMigration("v2: uploads, methods, session bookkeeping") { db in
            try db.execute(sql: """
                ALTER TABLE tasks ADD COLUMN method TEXT;
                ALTER TABLE tasks ADD COLUMN upload_file TEXT;
                ALTER TABLE sessions ADD COLUMN finished_events INTEGER NOT NULL DEFAULT 0;
                """)
        }
        m.registerMigration("v3: task counts kept as tasks change") { db in
            // GetStatus reads these seven rows instead of counting 100,000 tasks; the triggers
            // change them in the same transaction as the task, so they cannot drift.
            try db.execute(sql: """
                CREATE TABLE task_counts(state TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO task_counts(state, n) SELECT state, COUNT(*) FROM tasks GROUP BY state;
                CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
                    INSERT INTO task_counts(state, n) VALUES (NEW.state, 1)
                    ON CONFLICT(state) DO UPDATE SET n = n + 1;
                END;
                CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
                    UPDATE task_counts SET n = n - 1 WHERE state = OLD.state;
                END;
                CREATE TRIGGER task_counts_update AFTER UPDATE OF state ON tasks WHEN OLD.state != NEW.state BEGIN
                    UPDATE task_counts SET n = n - 1 WHERE state = OLD.state;
                    INSERT INTO task_counts(state, n) VALUES (NEW.state, 1)
                    ON CONFLICT(state) DO UPDATE SET n = n + 1;
                END;
                """)
        }
        return m
    }

    // MARK: Sessions

    func session(_ identifier: String) throws -> SessionConfig? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT config FROM sessions WHERE identifier = ?", arguments: [identifier])
        }.flatMap { try? JSONDecoder().decode(SessionConfig.self, from: Data($0.utf8)) }
    }

    func saveSession(_ identifier: String, _ config: SessionConfig, now: Int64) throws {
        let json = String(decoding: try JSONEncoder().encode(config), as: UTF8.self)
        try recording("the session \(identifier)") { try write { db in
            try db.execute(sql: """
                INSERT INTO sessions(identifier, config, created) VALUES (?, ?, ?)
                ON CONFLICT(identifier) DO UPDATE SET config = excluded.config
                """, arguments: [identifier, json, now])
        } }
    }

    /// Every session with its last sequence number and unacknowledged durable events.
    func loadEventQueues() throws -> [String: EventQueue] {
        try read { db in
            var out: [String: EventQueue] = [:]
            let sessions = try Row.fetchAll(db, sql: "SELECT identifier, last_seq FROM sessions")
            for s in sessions {
                let id: String = s["identifier"]
                let rows = try Row.fetchAll(db, sql: "SELECT seq, task, event FROM events WHERE session = ? ORDER BY seq", arguments: [id])
                let events: [QueuedEvent] = rows.compactMap { r in
                    let json: String = r["event"]
                    guard let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(json.utf8)) else { return nil }
                    return QueuedEvent(seq: UInt64(r["seq"] as Int64), task: r["task"], event: e)
                }
                out[id] = EventQueue(lastSeq: UInt64(s["last_seq"] as Int64), restored: events)
            }
            return out
        }
    }

    func appendEvent(session: String, _ e: QueuedEvent) throws {
        let json = String(decoding: try JSONEncoder().encode(e.event), as: UTF8.self)
        try write { db in
            try db.execute(sql: "INSERT INTO events(session, seq, task, event) VALUES (?, ?, ?, ?)",
                           arguments: [session, Int64(e.seq), e.task, json])
            try db.execute(sql: "UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?",
                           arguments: [Int64(e.seq), session])
        }
    }

    func setLastSeq(session: String, _ seq: UInt64) throws {
        try write { db in
            try db.execute(sql: "UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?",
                           arguments: [Int64(seq), session])
        }
    }

    func deleteEvents(session: String, upTo seq: UInt64) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM events WHERE session = ? AND seq <= ?", arguments: [session, Int64(seq)])
        }
    }

    // MARK: Tasks

    /// Inserts all tasks in one transaction; returns them with their new ids.
    func insert(_ records: [TaskRecord]) throws -> [TaskRecord] {
        try recording(records.count == 1 ? "the request" : "the \(records.count) requests") { try write { db in
            let stmt = try db.makeStatement(sql: """
                INSERT INTO tasks(session, url, host, state, reason, received, expected, etag, last_modified,
                    directory, output, file, suggested_name, sha256, description, headers, error, error_name,
                    attempts, retry_at, created, updated, kind, method, upload_file)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var out: [TaskRecord] = []
            out.reserveCapacity(records.count)
            for var r in records {
                try stmt.execute(arguments: Self.columns(r))
                r.id = db.lastInsertedRowID
                out.append(r)
            }
            return out
        } }
    }

    func update(_ r: TaskRecord) throws {
        var args = Self.columns(r)
        _ = args.append(contentsOf: [r.id])
        try write { db in
            try db.execute(sql: """
                UPDATE tasks SET session=?, url=?, host=?, state=?, reason=?, received=?, expected=?, etag=?,
                    last_modified=?, directory=?, output=?, file=?, suggested_name=?, sha256=?, description=?,
                    headers=?, error=?, error_name=?, attempts=?, retry_at=?, created=?, updated=?,
                    kind=?, method=?, upload_file=?
                WHERE id = ?
                """, arguments: args)
        }
    }

    func task(_ id: Int64) throws -> TaskRecord? {
        try read { db in try Row.fetchOne(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE id = ?", arguments: [id]).map(Self.record) }
    }

    func tasks(session: String?, afterID: Int64, limit: Int) throws -> [TaskRecord] {
        try read { db in
            if let session {
                return try Row.fetchAll(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE session = ? AND id > ? ORDER BY id LIMIT ?",
                                        arguments: [session, afterID, limit]).map(Self.record)
            }
            return try Row.fetchAll(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE id > ? ORDER BY id LIMIT ?",
                                    arguments: [afterID, limit]).map(Self.record)
        }
    }

    /// Queued tasks to start next, oldest first. `take` says whether one may start (host limits);
    /// hosts it refuses are left out of the following pages, so one busy host cannot hide the others.
    enum Pick { case take, skipTask, skipHost }

    func nextQueued(limit: Int, excludingHosts: Set<String>, excludingIDs: Set<Int64>,
                    take: (TaskRecord) -> Pick) throws -> [TaskRecord] {
        guard limit > 0 else { return [] }
        return try read { db in
            var out: [TaskRecord] = []
            var skipHosts = excludingHosts
            var after: Int64 = 0
            while out.count < limit {
                let placeholders = skipHosts.isEmpty ? "" : " AND host NOT IN (" + skipHosts.map { _ in "?" }.joined(separator: ",") + ")"
                var args: StatementArguments = [after]
                for h in skipHosts { _ = args.append(contentsOf: [h]) }
                let rows = try Row.fetchAll(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE state = 'queued' AND id > ?\(placeholders) ORDER BY id LIMIT 256",
                                            arguments: args)
                guard let last = rows.last else { break }
                after = last[0]   // id
                for row in rows {
                    let r = Self.record(row)
                    if excludingIDs.contains(r.id) || skipHosts.contains(r.host) { continue }
                    switch take(r) {
                    case .take: out.append(r)
                    case .skipTask: continue
                    case .skipHost: skipHosts.insert(r.host)
                    }
                    if out.count == limit { break }
                }
                if rows.count < 256 { break }
            }
            return out
        }
    }

    func waitingForNetwork() throws -> [TaskRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE state = 'waiting' AND reason = 'network' ORDER BY id").map(Self.record)
        }
    }

    func earliestRetry() throws -> Int64? {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT MIN(retry_at) FROM tasks WHERE state = 'waiting' AND retry_at IS NOT NULL")
        }
    }

    func dueRetries(now: Int64) throws -> [TaskRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.taskColumns) FROM tasks WHERE state = 'waiting' AND retry_at <= ? ORDER BY retry_at LIMIT 1000",
                             arguments: [now]).map(Self.record)
        }
    }

    /// Removes tasks from the list (one transaction).
    func deleteTasks(_ ids: [Int64]) throws {
        try write { db in
            let stmt = try db.makeStatement(sql: "DELETE FROM tasks WHERE id = ?")
            for id in ids { try stmt.execute(arguments: [id]) }
        }
    }

    /// Ended tasks (completed, failed, canceled), of one session or all, optionally only those
    /// that ended before a time (µs).
    func endedTaskIDs(session: String?, updatedBefore: Int64 = .max) throws -> [Int64] {
        try read { db in
            if let session {
                return try Int64.fetchAll(db, sql: """
                    SELECT id FROM tasks WHERE session = ? AND state IN ('completed', 'failed', 'canceled') AND updated < ?
                    """, arguments: [session, updatedBefore])
            }
            return try Int64.fetchAll(db, sql: "SELECT id FROM tasks WHERE state IN ('completed', 'failed', 'canceled') AND updated < ?",
                                      arguments: [updatedBefore])
        }
    }

    /// A task whose change the store refused continues: running (as stored) → queued.
    func requeueIfRunning(_ id: Int64, now: Int64) throws {
        try write { db in
            try db.execute(sql: "UPDATE tasks SET state = 'queued', updated = ? WHERE id = ? AND state = 'running'", arguments: [now, id])
        }
    }

    /// After a crash, tasks the store still calls running are queued again (their bytes are on disk).
    func requeueInterrupted(now: Int64) throws -> Int {
        try write { db in
            try db.execute(sql: "UPDATE tasks SET state = 'queued', updated = ? WHERE state = 'running'", arguments: [now])
            return db.changesCount
        }
    }

    func countsByState() throws -> [String: Int] {
        try read { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, n FROM task_counts") {
                out[row["state"]] = row["n"]
            }
            return out
        }
    }

    // MARK: Meta

    func meta(_ key: String) throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) }
    }

    func setMeta(_ key: String, _ value: String) throws {
        try write { db in
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        }
    }

    // MARK: Mapping

    private static func columns(_ r: TaskRecord) -> StatementArguments {
        let headers = (try? JSONEncoder().encode(r.headers)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return [r.session, r.url, r.host, r.state.rawValue, r.reason?.rawValue, r.received, r.expected, r.etag,
                r.lastModified, r.directory, r.output, r.file, r.suggestedName, r.sha256, r.description,
                headers, r.error, r.errorName, r.attempts, r.retryAt, r.created, r.updated,
                r.kind.rawValue, r.method, r.uploadFile]
    }

    /// The columns `record` reads, by position: GRDB's lookup by name lowercases the name on
    /// every access, a fifth of the agent's time in a 100,000-task listing.
    static let taskColumns = """
        id, session, url, host, state, reason, received, expected, etag, last_modified, directory, output, \
        file, suggested_name, sha256, description, headers, error, error_name, attempts, retry_at, created, \
        updated, kind, method, upload_file
        """

    private static func record(_ row: Row) -> TaskRecord {
        let headersJSON: String = row[16]
        let headers = headersJSON == "{}" ? [:] : (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8))) ?? [:]
        var r = TaskRecord(
            id: row[0], session: row[1], url: row[2], host: row[3],
            state: TaskState(rawValue: row[4]) ?? .failed,
            reason: (row[5] as String?).flatMap(WaitReason.init(rawValue:)),
            received: row[6], expected: row[7], etag: row[8],
            lastModified: row[9], directory: row[10], output: row[11],
            file: row[12], suggestedName: row[13], sha256: row[14],
            description: row[15], headers: headers, error: row[17], errorName: row[18],
            attempts: row[19], retryAt: row[20], created: row[21], updated: row[22])
        r.kind = TaskRecord.Kind(rawValue: row[23]) ?? .download
        r.method = row[24]
        r.uploadFile = row[25]
        return r
    }

    func finishedEvents(session: String) throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT finished_events FROM sessions WHERE identifier = ?", arguments: [session]) ?? 0
        }
    }

    func setFinishedEvents(session: String, at time: Int64) throws {
        try write { db in
            try db.execute(sql: "UPDATE sessions SET finished_events = ? WHERE identifier = ?", arguments: [time, session])
        }
    }

    /// Every session's configuration (loaded once at start-up).
    func allSessions() throws -> [String: SessionConfig] {
        try read { db in
            var out: [String: SessionConfig] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT identifier, config FROM sessions") {
                let json: String = row["config"]
                out[row["identifier"]] = (try? JSONDecoder().decode(SessionConfig.self, from: Data(json.utf8))) ?? SessionConfig()
            }
            return out
        }
    }

    /// Unfinished tasks of a session (for invalidation).
    func unfinishedTasks(session: String) throws -> [TaskRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.taskColumns) FROM tasks WHERE session = ? AND state NOT IN ('completed', 'failed', 'canceled') ORDER BY id
                """, arguments: [session]).map(Self.record)
        }
    }
}
