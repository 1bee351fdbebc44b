import FerryCore

/// The queue: which queued tasks start next.
extension Store {
    /// Queued tasks to start next: the highest priority first, then the oldest. `take` says whether
    /// one may start (host limits); hosts it refuses are left out of the following pages, so one
    /// busy host cannot hide the others.
    func nextQueued(
        limit: Int, excludingHosts: Set<String>, excludingIDs: Set<Int64>,
        take: (TaskRecord) -> QueuePick
    ) throws -> [TaskRecord] {
        guard limit > 0 else { return [] }
        return try read { db in
            // Whether a host not in `hosts` has queued tasks: the queue is read only while one
            // does. Else, with its hosts full and 100,000 tasks queued for them, the next page
            // would scan them all, at every start (with two transfers a host, after every file).
            func othersQueued(_ hosts: Set<String>) throws -> Bool {
                guard !hosts.isEmpty else { return true }
                return try db.cached(
                    "SELECT 1 FROM queued_hosts WHERE n > 0 AND host NOT IN (\(Self.placeholders(hosts.count))) LIMIT 1"
                )
                .integer(Array(hosts)) != nil
            }
            guard try othersQueued(excludingHosts) else { return [] }
            var out: [TaskRecord] = []
            var skipHosts = excludingHosts, skipSessions: Set<String> = []
            // One priority level at a time, highest first, each oldest first: both reads seek in
            // the queued tasks' index (an ORDER BY over both made SQLite sort the whole queue).
            func level(below p: Double) throws -> Double? {
                try db.cached(
                    """
                    SELECT priority FROM tasks INDEXED BY tasks_queue WHERE state = 'queued' AND priority < ?
                    ORDER BY priority DESC LIMIT 1
                    """
                ).column([p]) { $0.double(0) }.first
            }
            var priority = try level(below: 2), after: Int64 = 0
            // Left out in the read, not after it: the running tasks are stored queued, and are
            // the oldest; a row decoded costs more than one found.
            let excluded = Self.idList(excludingIDs)
            // A page a little longer than what is wanted, doubling while rows are skipped.
            var page = min(256, limit + 8)
            while out.count < limit, let p = priority {
                let placeholders =
                    (skipHosts.isEmpty ? "" : " AND host NOT IN (\(Self.placeholders(skipHosts.count)))")
                    + (skipSessions.isEmpty ? "" : " AND session NOT IN (\(Self.placeholders(skipSessions.count)))")
                let args: [any SQLiteValue] = [p, after, excluded] + Array(skipHosts) + Array(skipSessions) + [page]
                queuePagesRead += 1
                let skippedBefore = skipHosts.count
                var found = 0, last: Int64 = 0
                try db.cached(
                    """
                    SELECT \(Self.taskColumns) FROM tasks INDEXED BY tasks_queue
                    WHERE state = 'queued' AND priority = ? AND id > ?
                    AND id NOT IN (SELECT value FROM json_each(?))\(placeholders) ORDER BY id LIMIT ?
                    """
                ).rows(args) { row in
                    found += 1
                    last = row.int(0)
                    // The page's rows past those wanted are only counted: decoding a row costs
                    // more than finding it, and a start wants one to three.
                    guard out.count < limit else { return }
                    queueRowsDecoded += 1
                    let r = TaskColumns.record(row)
                    if skipHosts.contains(r.host) || skipSessions.contains(r.session) { return }
                    switch take(r) {
                    case .take: out.append(r)
                    case .skipTask: break
                    case .skipHost: skipHosts.insert(r.host)
                    case .skipSession: skipSessions.insert(r.session)
                    }
                }
                if found < page {  // this level is read to its end: the next one down
                    priority = try level(below: p)
                    after = 0
                } else {
                    after = last
                }
                // The hosts this page filled may be all that have queued tasks.
                if skipHosts.count > skippedBefore, try !othersQueued(skipHosts) { break }
                page = min(256, page * 2)
            }
            return out
        }
    }
}
