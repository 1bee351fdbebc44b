import FerryCore
import FoundationEssentials

/// Sessions, their event queues, and small agent-wide values (the badge).
extension Store {
    // MARK: Sessions

    func session(_ identifier: String) throws -> SessionConfig? {
        try read { db in
            try db.cached("SELECT config FROM sessions WHERE identifier = ?").text([identifier])
        }.flatMap { try? JSONDecoder().decode(SessionConfig.self, from: Data($0.utf8)) }
    }

    func saveSession(_ identifier: String, _ config: SessionConfig, now: Int64) throws {
        let json = String(decoding: try JSONEncoder().encode(config), as: UTF8.self)
        try recording("the session \(identifier)") {
            try write { db in
                try db.cached(
                    """
                    INSERT INTO sessions(identifier, config, created) VALUES (?, ?, ?)
                    ON CONFLICT(identifier) DO UPDATE SET config = excluded.config
                    """
                ).run([identifier, json, now])
            }
        }
    }

    /// Every session with its last sequence number and unacknowledged durable events.
    func loadEventQueues() throws -> [String: EventQueue] {
        try read { db in
            var out: [String: EventQueue] = [:]
            var sessions: [(String, Int64)] = []
            try db.prepare("SELECT identifier, last_seq FROM sessions").rows {
                sessions.append(($0.text(0), $0.int(1)))
            }
            let eventsOf = try db.prepare("SELECT seq, task, event FROM events WHERE session = ? ORDER BY seq")
            for (id, lastSeq) in sessions {
                var events: [QueuedEvent] = []
                try eventsOf.rows([id]) { r in
                    guard let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(r.text(2).utf8)) else {
                        return
                    }
                    events.append(QueuedEvent(seq: UInt64(r.int(0)), task: r.int(1), event: e))
                }
                out[id] = EventQueue(lastSeq: UInt64(lastSeq), restored: events)
            }
            return out
        }
    }

    func appendEvent(session: String, _ e: QueuedEvent) throws {
        let json = String(decoding: try JSONEncoder().encode(e.event), as: UTF8.self)
        try write { db in
            try db.cached("INSERT INTO events(session, seq, task, event) VALUES (?, ?, ?, ?)")
                .run([session, Int64(e.seq), e.task, json])
            try db.cached("UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?")
                .run([Int64(e.seq), session])
        }
    }

    func setLastSeq(session: String, _ seq: UInt64) throws {
        try write { db in
            try db.cached("UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE identifier = ?")
                .run([Int64(seq), session])
        }
    }

    func deleteEvents(session: String, upTo seq: UInt64) throws {
        try write { db in
            try db.cached("DELETE FROM events WHERE session = ? AND seq <= ?").run([session, Int64(seq)])
        }
    }

    // MARK: Meta

    func meta(_ key: String) throws -> String? {
        try read { db in try db.cached("SELECT value FROM meta WHERE key = ?").text([key]) }
    }

    /// Cached: the badge is written by every turn that completes downloads.
    func setMeta(_ key: String, _ value: String) throws {
        try write { db in
            try db.cached(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            .run([key, value])
        }
    }

    func finishedEvents(session: String) throws -> Int64 {
        try read { db in
            try db.cached("SELECT finished_events FROM sessions WHERE identifier = ?").integer([session]) ?? 0
        }
    }

    func setFinishedEvents(session: String, at time: Int64) throws {
        try write { db in
            try db.cached("UPDATE sessions SET finished_events = ? WHERE identifier = ?").run([time, session])
        }
    }

    /// Every session's configuration (loaded once at start-up).
    func allSessions() throws -> [String: SessionConfig] {
        try read { db in
            var out: [String: SessionConfig] = [:]
            try db.prepare("SELECT identifier, config FROM sessions").rows { row in
                out[row.text(0)] =
                    (try? JSONDecoder().decode(SessionConfig.self, from: Data(row.text(1).utf8))) ?? SessionConfig()
            }
            return out
        }
    }
}
