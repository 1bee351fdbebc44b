import CSQLite
import FoundationEssentials
import Glibc

/// Makes the store's commits durable: fdatasync(2) of its write-ahead log, what SQLite's FULL
/// does at every commit (the store runs with NORMAL). Callable from any thread, one sync at a
/// time: the agent runs them on its outbox thread, so that the loop does not wait for the disk
/// and nothing that reveals a commit leaves before the sync that covers it. A sync covers every
/// commit noted before it began; syncs queued behind a slow one find nothing left to do.
final class LogSync: @unchecked Sendable {  // counters under `counts`, the descriptor under `syncing`
    private let path: String
    private let counts = Lock()
    private var committed = 0
    private var synced = 0
    private let syncing = Lock()
    private var log: Int32 = -1
    /// fdatasync(2) calls made (the tests check that covered commits cost none).
    private(set) var diskSyncs = 0

    /// `path`: the write-ahead log (`ferry.sqlite3-wal`).
    init(path: String) { self.path = path }

    deinit { if log >= 0 { close(log) } }

    /// A commit that must be durable was made (called right after it).
    func noteCommit() {
        counts.lock()
        committed += 1
        counts.unlock()
    }

    /// Returns once every commit noted so far is on disk.
    func sync() throws {
        syncing.lock()
        defer { syncing.unlock() }
        counts.lock()
        let target = committed, done = synced >= target
        counts.unlock()
        guard !done else { return }
        var st = stat()
        if log >= 0, fstat(log, &st) == 0, st.st_nlink > 0 {
        } else {
            if log >= 0 { close(log) }
            log = open(path, O_RDONLY | O_CLOEXEC)
            if log < 0 {
                guard errno == ENOENT else {  // ENOENT: nothing written since a checkpoint removed it
                    throw SQLiteError(
                        code: SQLITE_IOERR, message: "cannot open the store's log: \(String(cString: strerror(errno)))")
                }
            }
        }
        diskSyncs += 1
        if log >= 0, fdatasync(log) != 0 {
            throw SQLiteError(
                code: SQLITE_IOERR, message: "cannot sync the store's log: \(String(cString: strerror(errno)))")
        }
        counts.lock()
        synced = max(synced, target)
        counts.unlock()
    }
}
