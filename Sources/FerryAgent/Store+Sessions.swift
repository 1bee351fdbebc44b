import FerryCore
import Foundation
import GRDB

/// Sessions, their event queues, and small agent-wide values (the badge).
extension Store {
    // MARK: Sessions

    func session(_ identifier: String) throws -> SessionConfig? {
        try read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT config FROM sessions WHERE identifier = ?"), arguments: [identifier])
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
            try db.cachedStatement(sql: "INSERT INTO events(session, seq, task, event) VALUES (?, ?, ?, ?)")
                .execute(arguments: [session, Int64(e.seq), e.task, json])
            try db.cachedStatement(sql: "UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?")
                .execute(arguments: [Int64(e.seq), session])
        }
    }

    func setLastSeq(session: String, _ seq: UInt64) throws {
        try write { db in
            try db.cachedStatement(sql: "UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?")
                .execute(arguments: [Int64(seq), session])
        }
    }

    func deleteEvents(session: String, upTo seq: UInt64) throws {
        try write { db in
            try db.cachedStatement(sql: "DELETE FROM events WHERE session = ? AND seq <= ?").execute(arguments: [session, Int64(seq)])
        }
    }


    // MARK: Meta

    func meta(_ key: String) throws -> String? {
        try read { db in try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = ?"), arguments: [key]) }
    }

    /// Cached: the badge is written at every completion.
    func setMeta(_ key: String, _ value: String) throws {
        try write { db in
            try db.cachedStatement(sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .execute(arguments: [key, value])
        }
    }

    func finishedEvents(session: String) throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT finished_events FROM sessions WHERE identifier = ?"), arguments: [session]) ?? 0
        }
    }

    func setFinishedEvents(session: String, at time: Int64) throws {
        try write { db in
            try db.cachedStatement(sql: "UPDATE sessions SET finished_events = ? WHERE identifier = ?").execute(arguments: [time, session])
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
}
