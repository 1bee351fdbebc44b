import FerryCore
import Glibc

/// The store as the agent core sees it: rows to read, and the changes of a turn to write.
extension Store: AgentLedger {
    /// Tasks stored by an agent older than the keyring's use, whose URL still holds
    /// user:password; once moved (`credentialsMoved`), never looked for again: a full scan.
    func tasksWithURLCredentials() throws -> [TaskRecord]? {
        guard try meta(Self.credentialsMoved) == nil else { return nil }
        return try read { db in
            try Self.records(db.cached("SELECT \(Self.taskColumns) FROM tasks WHERE url LIKE '%@%'"), [])
        }
    }
    static let credentialsMoved = "url-credentials-moved"

    func heldInStaging(sessions: [String], excluding running: Set<Int64>) throws -> Int64 {
        guard !sessions.isEmpty else { return 0 }
        return try read { db in
            try db.prepare(
                """
                SELECT coalesce(sum(received), 0) FROM tasks WHERE session IN (\(Self.placeholders(sessions.count)))
                AND kind = 'download' AND state IN ('queued', 'waiting', 'paused')
                AND id NOT IN (SELECT value FROM json_each(?))
                """
            ).integer(sessions + [Self.idList(running)]) ?? 0
        }
    }

    /// Task ids as one parameter (a JSON array, read by `json_each`): one statement for any count.
    static func idList(_ ids: Set<Int64>) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    func stagedBytes(_ id: Int64) -> Int64 {
        var st = stat()
        return stat(StateFolder(stateDirectory).staged(id), &st) == 0 ? Int64(st.st_size) : 0
    }

    /// One write of a turn (inside its transaction: see `Agent.turn`).
    func apply(_ w: StoreWrite, now: Int64) throws {
        switch w {
        case .insert(let records): try insert(records)
        case .update(let r): try w.isCheckpoint ? checkpoint { try update(r) } : update(r)
        case .progress(let r): try checkpoint { try update(r, keepingState: true) }
        case .deleteTasks(let ids): try deleteTasks(ids)
        case .appendEvent(let session, let e): try appendEvent(session: session, e)
        case .reserveSeq(let session, let seq): try setLastSeq(session: session, seq)
        case .deleteEvents(let session, let seq): try deleteEvents(session: session, upTo: seq)
        case .saveSession(let id, let config): try saveSession(id, config, now: now)
        case .finishedEvents(let session, let at): try setFinishedEvents(session: session, at: at)
        case .badge(let n): try setBadge(n)
        }
    }
}
