import FerryCore
import FoundationEssentials

/// Task rows.
extension Store {
    // MARK: Tasks

    /// Inserts tasks with the ids the core gave them (after `lastTaskID`).
    func insert(_ records: [TaskRecord]) throws {
        try recording(records.count == 1 ? "the request" : "the \(records.count) requests") {
            try write { db in
                // A batch goes in `insertRows` rows a statement: SQLite runs a statement's program
                // (and its AUTOINCREMENT bookkeeping) once for them all.
                var rest = records[...]
                if rest.count >= Self.insertRows {
                    let many = try db.cached(Self.insertMany)
                    while rest.count >= Self.insertRows {
                        try TaskColumns.execute(many, binding: rest.prefix(Self.insertRows))
                        rest = rest.dropFirst(Self.insertRows)
                    }
                }
                if !rest.isEmpty {
                    let one = try db.cached(Self.insertOne)
                    for r in rest { try TaskColumns.execute(one, binding: r) }
                }
                try Self.count(records, db)
            }
        }
    }

    static let insertRows = 32

    /// The INSERT of one task, and of `insertRows` (`TaskColumns.count` parameters a row).
    private static let insertOne = insertSQL(rows: 1)
    private static let insertMany = insertSQL(rows: insertRows)

    private static func insertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: TaskColumns.count).joined(separator: ", ") + ")"
        return """
            INSERT INTO tasks(\(TaskColumns.insertList))
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))
            """
    }

    /// Adds new tasks to `task_counts` and `queued_hosts` (what the update and delete triggers
    /// keep for changes), in the insert's transaction.
    private static func count(_ records: [TaskRecord], _ db: SQLiteConnection) throws {
        var states: [String: Int] = [:], hosts: [String: Int] = [:]
        for r in records {
            states[r.state.rawValue, default: 0] += 1
            if r.state == .queued { hosts[r.host, default: 0] += 1 }
        }
        let state = try db.cached(
            "INSERT INTO task_counts(state, n) VALUES (?, ?) ON CONFLICT(state) DO UPDATE SET n = n + excluded.n")
        for (name, n) in states { try state.run([name, n]) }
        let host = try db.cached(
            "INSERT INTO queued_hosts(host, n) VALUES (?, ?) ON CONFLICT(host) DO UPDATE SET n = n + excluded.n")
        for (name, n) in hosts { try host.run([name, n]) }
    }

    /// Writes a task's row but its session, which never changes once it is made.
    /// `keepingState`: its host and state stay as stored too (see `StoreWrite.progress`). SQLite
    /// rewrites an index, and runs the count triggers, whenever one of its columns is set, even
    /// to the same value.
    func update(_ r: TaskRecord, keepingState: Bool = false) throws {
        try write { db in
            // Cached: compiled once, not for every change of every task.
            let keys: TaskColumns.Keys = keepingState ? .none : .allButSession
            let stmt = try db.cached(keepingState ? Self.updateKeepingState : Self.updateAll)
            try TaskColumns.execute(stmt, binding: r, keys: keys)
        }
    }

    func task(_ id: Int64) throws -> TaskRecord? {
        try read { db in
            try Self.records(db.cached("SELECT \(Self.taskColumns) FROM tasks WHERE id = ?"), [id]).first
        }
    }

    /// `session IN (...)` for a list of sessions, nothing for all.
    private static func scope(_ sessions: [String]?) -> (sql: String, args: [any SQLiteValue]) {
        guard let sessions else { return ("", []) }
        return (
            " AND session IN (" + Array(repeating: "?", count: sessions.count).joined(separator: ",") + ")",
            sessions
        )
    }

    func tasks(sessions: [String]?, afterID: Int64, limit: Int) throws -> [TaskRecord] {
        let scope = Self.scope(sessions)
        return try read { db in
            try Self.records(
                db.cached("SELECT \(Self.taskColumns) FROM tasks WHERE id > ?\(scope.sql) ORDER BY id LIMIT ?"),
                [afterID] + scope.args + [limit])
        }
    }

    func taskSection(sessions: [String]?, active: Bool, offset: Int, limit: Int) throws -> [TaskRecord] {
        // The primary key's order, filtered: no sort, and the first page of either section is cheap.
        let scope = Self.scope(sessions)
        let filter = (active ? "NOT " : "") + "state IN ('completed', 'failed', 'canceled')" + scope.sql
        let sql =
            "SELECT \(Self.taskColumns) FROM tasks WHERE \(filter) ORDER BY id\(active ? "" : " DESC") LIMIT ? OFFSET ?"
        return try read { db in try Self.records(db.cached(sql), scope.args + [limit, offset]) }
    }

    /// "?,?,?" for an IN list of `n` values.
    static func placeholders(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ",") }

    func lastTaskID() throws -> Int64 {
        try read { db in
            try db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'tasks'").integer() ?? 0
        }
    }

    /// Removes tasks from the list (one transaction).
    func deleteTasks(_ ids: [Int64]) throws {
        try write { db in
            let stmt = try db.prepare("DELETE FROM tasks WHERE id = ?")
            for id in ids { try stmt.run([id]) }
        }
    }

    /// Ended tasks (completed, failed, canceled), of one session or all, optionally only those
    /// that ended before a time (µs).
    func endedTaskIDs(session: String?, updatedBefore: Int64) throws -> [Int64] {
        try read { db in
            if let session {
                return try db.prepare(
                    """
                    SELECT id FROM tasks
                    WHERE session = ? AND state IN ('completed', 'failed', 'canceled') AND updated < ?
                    """
                ).integers([session, updatedBefore])
            }
            return try db.prepare(
                "SELECT id FROM tasks WHERE state IN ('completed', 'failed', 'canceled') AND updated < ?"
            )
            .integers([updatedBefore])
        }
    }

    /// Rows an older agent stored as running (this one keeps running tasks queued) are queued
    /// again: their bytes are on disk.
    func requeueInterrupted(now: Int64) throws -> Int {
        try write { db in
            try db.prepare("UPDATE tasks SET state = 'queued', updated = ? WHERE state = 'running'").run([now])
            return db.changes
        }
    }

    /// Kept counts for all sessions; counted (by the session index) for a few.
    func countsByState(sessions: [String]?) throws -> [String: Int] {
        let scope = Self.scope(sessions)
        let sql =
            sessions == nil
            ? "SELECT state, n FROM task_counts"
            : "SELECT state, COUNT(*) AS n FROM tasks WHERE 1\(scope.sql) GROUP BY state"
        return try read { db in
            var out: [String: Int] = [:]
            try db.cached(sql).rows(scope.args) { row in out[row.text(0)] = Int(row.int(1)) }
            return out
        }
    }

    // MARK: Mapping

    /// Most tasks have no extra headers: no encoder for them (a fifth of a batch insert).
    static func headersJSON(_ headers: [String: String]) -> String {
        headers.isEmpty
            ? "{}" : (try? JSONEncoder().encode(headers)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The columns `TaskColumns.record` reads, by position (no lookup of columns by name).
    static let taskColumns = TaskColumns.selectList
    private static let updateAll = "UPDATE tasks SET \(TaskColumns.setClause(.allButSession)) WHERE id = ?"
    private static let updateKeepingState = "UPDATE tasks SET \(TaskColumns.setClause(.none)) WHERE id = ?"

    /// The task rows a statement selects (`taskColumns`), read straight from SQLite's columns.
    static func records(_ statement: SQLiteStatement, _ arguments: [any SQLiteValue]) throws -> [TaskRecord] {
        var out: [TaskRecord] = []
        try statement.rows(arguments) { out.append(TaskColumns.record($0)) }
        return out
    }

    func taskIDs(session: String?, states: Set<TaskState>) throws -> [Int64] {
        let list = states.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")  // enum names only: no injection
        return try read { db in
            if let session {
                return try db.prepare("SELECT id FROM tasks WHERE session = ? AND state IN (\(list)) ORDER BY id")
                    .integers([session])
            }
            return try db.prepare("SELECT id FROM tasks WHERE state IN (\(list)) ORDER BY id").integers()
        }
    }

    /// Unfinished tasks of a session (for invalidation).
    func unfinishedTaskIDs(session: String) throws -> [Int64] {
        try read { db in
            try db.prepare(
                """
                SELECT id FROM tasks WHERE session = ? AND state NOT IN ('completed', 'failed', 'canceled') ORDER BY id
                """
            ).integers([session])
        }
    }

    /// Upload files of unfinished tasks that lie under `folder` (the agent's copies).
    func uploadFilesInUse(under folder: String) throws -> Set<String> {
        try read { db in
            Set(
                try db.prepare(
                    """
                    SELECT upload_file FROM tasks
                    WHERE upload_file IS NOT NULL AND substr(upload_file, 1, length(?1)) = ?1
                    AND state NOT IN ('completed', 'failed', 'canceled')
                    """
                ).texts([folder]))
        }
    }
}
