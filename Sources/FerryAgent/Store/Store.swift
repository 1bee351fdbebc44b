import CSQLite
import FerryBus
import FerryCore
import FoundationEssentials

/// The agent's durable state in SQLite (WAL). A turn that wrote anything but checkpoints
/// (`StoreWrite.isCheckpoint`) must be durable before anything reveals it: SQLite runs with
/// synchronous=NORMAL and the store fdatasyncs the log after such a commit (`LogSync`), which is
/// what FULL does for every commit (NORMAL still syncs the log's header and checkpoints) — when
/// `batch` returns, or, in the agent, on its outbox thread ahead of the turn's messages.
/// Every SQL statement of the agent lives in Store*.swift: the connection and schema here, rows
/// in Store+Tasks and Store+Sessions, what the core reads and writes in Store+Ledger.
final class Store {
    let path: String
    /// The folder the store lives in (staging is beside it).
    let stateDirectory: String
    private let db: SQLiteConnection
    /// A batch is open (see `batch`): every write joins its transaction until it commits.
    private var batchOpen = false
    /// The open batch has written (its transaction began with the first write).
    private var batchWrote = false
    /// The open batch wrote more than checkpoints: its commit waits for the disk.
    private var batchMustSync = false
    /// Writes made now are a running task's checkpoint.
    private var writingCheckpoint = false
    /// The badge the open batch set last: written once, as it commits (a batch of finished
    /// downloads sets it once for each).
    private var batchBadge: Int?
    /// fdatasync(2) of the write-ahead log after a commit that must be durable.
    let logSync: LogSync
    /// Set by the agent: a commit that must be durable is synced later, on its outbox thread,
    /// before anything that reveals it leaves (see `Agent.turn`). Unset: the commit syncs inline.
    var syncLater: (() -> Void)?
    /// The last batch committed changes whose sync was handed to `syncLater`.
    private(set) var lastBatchAwaitsSync = false
    /// How many commits had to be made durable (the tests count the turns that wait for the disk).
    private(set) var logSyncs = 0
    /// Pages of the queue read to find tasks to start, and rows of them decoded (the tests count them).
    var queuePagesRead = 0, queueRowsDecoded = 0

    init(path: String) throws {
        self.path = path
        stateDirectory = PathName.folder(of: path)
        logSync = LogSync(path: path + "-wal")
        do {
            // A replacing agent (--replace) waits while the old one saves its last state and exits.
            db = try SQLiteConnection(path: path, busyMilliseconds: 10_000)
            // One agent a store: the first read locks the file until this agent exits, so a
            // second agent (another session's bus, a replaced one still saving) cannot run the
            // same tasks. Set before WAL is first used, SQLite then keeps the log's index in
            // memory and takes no lock per transaction.
            try db.execute("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            // Statement journals and sorts in memory: in a file (/var/tmp/etilqs_*) they cost a
            // small file's download 20 writes of 2 KiB (the count triggers make each task UPDATE
            // a statement that may have to be undone alone). Nothing durable lives there.
            try db.execute("PRAGMA temp_store = MEMORY")
            try Self.migrate(db)
        } catch let e as SQLiteError where e.primary == SQLITE_BUSY {
            throw FerryError(
                .storeUnavailable,
                "the store \(path) is in use by another ferryd (on another session bus?): one agent a state folder")
        }
        try syncNow()
    }

    /// Makes every commit so far durable, on this thread.
    private func syncNow() throws {
        logSyncs += 1
        logSync.noteCommit()
        try logSync.sync()
    }

    /// Writes a running task's checkpoint (see `StoreWrite.isCheckpoint`).
    func checkpoint<T>(_ body: () throws -> T) rethrows -> T {
        writingCheckpoint = true
        defer { writingCheckpoint = false }
        return try body()
    }

    /// Runs `body` as one transaction (the agent's turn): everything it writes commits together
    /// or not at all. The transaction begins with the first write, so a turn that only reads
    /// (most rounds of curl's work) costs no commit. A nested batch is part of the outer one.
    func batch<T>(_ body: () throws -> T) throws -> T {
        assert(!CurlMulti.insideCurl, "a store write inside a curl callback")
        if batchOpen { return try body() }
        lastBatchAwaitsSync = false
        batchOpen = true
        batchWrote = false
        batchMustSync = false
        defer { batchOpen = false; batchBadge = nil }
        do {
            let result = try body()
            if let badge = batchBadge { try setMeta("badge", String(badge)) }
            if batchWrote {
                try db.cached("COMMIT TRANSACTION").run()
                if batchMustSync {
                    logSyncs += 1
                    logSync.noteCommit()
                    if let later = syncLater {
                        lastBatchAwaitsSync = true
                        later()
                    } else {
                        try logSync.sync()
                    }
                }
            }
            return result
        } catch {
            if db.isInsideTransaction { try? db.execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }

    /// The badge: at once outside a batch, else once for the batch as it commits.
    func setBadge(_ n: Int) throws {
        if batchOpen { batchBadge = n } else { try setMeta("badge", String(n)) }
    }

    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T { try body(db) }

    /// Leaves no old bytes of what `body` overwrites on any page: freed space is zeroed while it
    /// runs (secure_delete), then the log is checkpointed into the file and emptied. For the
    /// passwords moved out of URLs an older agent stored.
    func scrubbing(_ body: () throws -> Void) throws {
        try db.execute("PRAGMA secure_delete = ON")
        defer { try? db.execute("PRAGMA secure_delete = OFF") }
        try body()
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        assert(!CurlMulti.insideCurl, "a store write inside a curl callback")
        if batchOpen {
            if !batchWrote {
                try db.cached("BEGIN IMMEDIATE TRANSACTION").run()
                batchWrote = true
            }
            if !writingCheckpoint { batchMustSync = true }
            return try body(db)
        }
        let result = try db.transaction { try body(db) }
        try syncNow()
        return result
    }

    /// A new request is acknowledged only once durable: when SQLite cannot commit it, the
    /// caller hears so by name (StoreUnavailable), and nothing was queued.
    func recording<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as SQLiteError {
            throw FerryError(.storeUnavailable, "cannot record \(what): \(e.message) (\(path)); nothing was queued")
        }
    }
}
