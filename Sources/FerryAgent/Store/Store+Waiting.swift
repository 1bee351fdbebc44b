import FerryCore

/// The tasks that wait: for the network, for a reason (a folder to come back), for their retry time.
extension Store {
    func waitingForNetwork() throws -> [TaskRecord] {
        try read { db in
            try Self.records(
                db.cached(
                    "SELECT \(Self.taskColumns) FROM tasks WHERE state = 'waiting' AND reason = 'network' ORDER BY id"),
                [])
        }
    }

    func waiting(for reason: WaitReason) throws -> [TaskRecord] {
        try read { db in
            try Self.records(
                db.cached("SELECT \(Self.taskColumns) FROM tasks WHERE state = 'waiting' AND reason = ? ORDER BY id"),
                [reason.rawValue])
        }
    }

    func earliestRetry(after: Int64) throws -> Int64? {
        try read { db in
            try db.cached("SELECT MIN(retry_at) FROM tasks WHERE state = 'waiting' AND retry_at > ?").integer([after])
        }
    }

    func dueRetries(now: Int64, limit: Int) throws -> [TaskRecord] {
        try read { db in
            try Self.records(
                db.cached(
                    "SELECT \(Self.taskColumns) FROM tasks WHERE state = 'waiting' AND retry_at <= ? ORDER BY "
                        + "retry_at LIMIT ?"
                ),
                [now, limit])
        }
    }

    /// The highest task id ever given (AUTOINCREMENT: never reused, even after removals).
}
