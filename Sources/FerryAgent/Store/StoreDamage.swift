import CSQLite
import FerryCore
import FoundationEssentials
import Glibc

/// A store SQLite calls damaged (not a database, or a malformed page): the agent would fail at
/// every start, so under `Restart=on-failure` and D-Bus activation every call would fail with
/// nothing said outside the journal. Instead the store (with its WAL) is moved aside, a new one
/// is made, and what SQLite can still read of the old one comes back: sessions, and their
/// tasks (the unfinished ones paused, for the user to look at before they run again).
enum StoreDamage {
    /// Whether `error` says the store's file is damaged (rather than busy, full or missing).
    static func isDamage(_ error: Error) -> Bool {
        guard let e = error as? SQLiteError else { return false }
        return e.primary == SQLITE_CORRUPT || e.primary == SQLITE_NOTADB
    }

    /// Moves the store, its WAL and its shared memory aside (`ferry.sqlite3.damaged-TIME`,
    /// TIME in Unix seconds, the WAL beside it under SQLite's name for it); the new path.
    static func moveAside(_ path: String, now: Int64) -> String {
        var aside = path + ".damaged-\(now / 1_000_000)"
        var n = 1
        while access(aside, F_OK) == 0 {  // two damaged starts within a second
            aside = path + ".damaged-\(now / 1_000_000)-\(n)"
            n += 1
        }
        for suffix in ["", "-wal", "-shm"] { rename(path + suffix, aside + suffix) }
        return aside
    }

    /// What could be read back.
    struct Readable {
        var sessions: [String: SessionConfig] = [:]
        var tasks: [TaskRecord] = []
    }

    /// The rows SQLite still gives of the damaged store, up to the first damaged page of each
    /// table; a task comes back only with its session (its owner must be known: an app's task
    /// must not become the user's), unfinished ones paused.
    static func readable(_ aside: String) -> Readable {
        var found = Readable()
        guard let db = try? SQLiteConnection(path: aside, busyMilliseconds: 0) else { return found }
        try? db.prepare("SELECT identifier, config FROM sessions").rows { row in
            if let c = try? JSONDecoder().decode(SessionConfig.self, from: Data(row.text(1).utf8)) {
                found.sessions[row.text(0)] = c
            }
        }
        var tasks: [TaskRecord] = []
        try? db.prepare("SELECT \(Store.taskColumns) FROM tasks ORDER BY id").rows {
            tasks.append(TaskColumns.record($0))
        }
        found.tasks = tasks.filter { found.sessions[$0.session] != nil }.map(paused)
        return found
    }

    /// An unfinished task as it comes back: paused, its wait and attempt forgotten.
    static func paused(_ r: TaskRecord) -> TaskRecord {
        guard !r.state.isFinal else { return r }
        var p = r
        p.state = .paused
        p.reason = nil
        p.retryAt = nil
        return p
    }
}

extension Store {
    /// What was read back of a damaged store, written in one batch; the next task's id is
    /// past every one the old store gave out that has bytes in staging (`stagedIDs`), so no new
    /// task takes an old one's partial file.
    func restore(_ found: StoreDamage.Readable, stagedIDs: Set<Int64>, now: Int64) throws {
        try batch {
            for (id, config) in found.sessions.sorted(by: { $0.key < $1.key }) {
                try saveSession(id, config, now: now)
            }
            if !found.tasks.isEmpty { try insert(found.tasks) }
            let highest = max(found.tasks.map(\.id).max() ?? 0, stagedIDs.max() ?? 0)
            try write { db in
                try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'tasks'").run([highest])
                try db.prepare(
                    "INSERT INTO sqlite_sequence(name, seq) SELECT 'tasks', ? WHERE NOT EXISTS "
                        + "(SELECT 1 FROM sqlite_sequence WHERE name = 'tasks')"
                ).run([highest])
            }
        }
    }
}
