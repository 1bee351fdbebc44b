import CSQLite
import FerryBus
import Glibc

/// The few parts of SQLite's C API the store uses, in Swift types: a connection, its compiled
/// statements (cached by their text), values to bind and rows to read by position. Everything
/// runs on the thread that owns the connection (the agent's loop): no locks here.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]

    /// Before the first connection: no global memory statistics, so no process-wide mutex
    /// around each of SQLite's allocations (an UPDATE of a task makes dozens; only this thread
    /// uses SQLite). Too late once SQLite is initialized: then it changes nothing.
    private static let configured: Void = { _ = ferry_sqlite_without_memory_statistics() }()

    /// Opens (creating) the database at `path`; a locked database is retried for `busyMilliseconds`.
    init(path: String, busyMilliseconds: Int32) throws {
        Self.configured
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: "cannot open \(path): \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyMilliseconds)
    }

    deinit {
        cache.removeAll()  // statements finalize before their connection closes
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without arguments (schema, pragmas).
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// The statement for `sql`, compiled at its first use.
    func cached(_ sql: String) throws -> SQLiteStatement {
        if let s = cache[sql] { return s }
        let s = try SQLiteStatement(sql, on: self)
        cache[sql] = s
        return s
    }

    /// Runs `body` in a transaction of its own: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try cached("BEGIN IMMEDIATE TRANSACTION").run()
        do {
            let result = try body()
            try cached("COMMIT TRANSACTION").run()
            return result
        } catch {
            if isInsideTransaction { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }

    /// A statement used once (compiled anew at every call).
    func prepare(_ sql: String) throws -> SQLiteStatement { try SQLiteStatement(sql, on: self) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }
    var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    func check(_ code: Int32) throws {
        guard code == SQLITE_OK || code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
    }

    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLite's result code and its message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    /// The primary code (SQLITE_BUSY for SQLITE_BUSY_RECOVERY, …).
    var primary: Int32 { code & 0xff }
    var description: String { "SQLite error \(code): \(message)" }
}

/// A value a statement's parameter can take.
protocol SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32)
}

extension Int64: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) { sqlite3_bind_int64(statement, index, self) }
}

extension Double: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) { sqlite3_bind_double(statement, index, self) }
}

extension Int: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension String: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) {
        var s = self
        s.withUTF8 { u in
            u.withMemoryRebound(to: CChar.self) { c in
                _ = sqlite3_bind_text(
                    statement, index, c.baseAddress ?? SQLiteStatement.emptyText, Int32(c.count),
                    SQLiteStatement.transient)
            }
        }
    }
}

extension Optional: SQLiteValue where Wrapped: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) {
        if let v = self { v.bind(to: statement, at: index) } else { sqlite3_bind_null(statement, index) }
    }
}

/// A compiled statement. `run`, `rows` and the fetches bind their arguments from the first
/// parameter on and reset the statement when done, so a cached one is ready for its next use.
final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(_ sql: String, on connection: SQLiteConnection) throws {
        var s: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil)
        guard code == SQLITE_OK, let s else { throw connection.error(code) }
        handle = s
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Runs the statement to its end.
    func run(_ arguments: [any SQLiteValue] = []) throws {
        try rows(arguments) { _ in }
    }

    /// Calls `row` for every row, with the statement on it (read its columns by position).
    func rows(_ arguments: [any SQLiteValue] = [], _ row: (SQLiteRow) throws -> Void) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, a) in arguments.enumerated() { a.bind(to: handle, at: Int32(i + 1)) }
        try step(row)
    }

    /// Runs the statement to its end with its parameters bound by `bind`, one after another
    /// (no array of arguments: the store binds a task's 26 columns so at every change).
    func run(binding bind: (inout SQLiteBinder) -> Void) throws {
        sqlite3_reset(handle)
        var binder = SQLiteBinder(statement: handle)
        bind(&binder)
        try step { _ in }
    }

    private func step(_ row: (SQLiteRow) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw connection.error(code) }
            try row(SQLiteRow(statement: handle))
        }
    }

    /// Every row's first column, read by `value`.
    func column<T>(_ arguments: [any SQLiteValue] = [], _ value: (SQLiteRow) -> T) throws -> [T] {
        var out: [T] = []
        try rows(arguments) { out.append(value($0)) }
        return out
    }

    func integers(_ arguments: [any SQLiteValue] = []) throws -> [Int64] { try column(arguments) { $0.int(0) } }
    func texts(_ arguments: [any SQLiteValue] = []) throws -> [String] { try column(arguments) { $0.text(0) } }
    /// The first row's first column (nil: no row, or NULL).
    func integer(_ arguments: [any SQLiteValue] = []) throws -> Int64? {
        try column(arguments) { $0.optionalInt(0) }.first ?? nil
    }
    func text(_ arguments: [any SQLiteValue] = []) throws -> String? {
        try column(arguments) { $0.optionalText(0) }.first ?? nil
    }

    /// An empty string is a pointer to a NUL (a null pointer would bind NULL).
    static let emptyText = UnsafePointer<CChar>(strdup("")!)
    /// SQLite copies the bytes (a Swift string's pointer lives only as long as the call).
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

/// Binds a statement's parameters in order.
struct SQLiteBinder {
    let statement: OpaquePointer
    private var index: Int32 = 0
    init(statement: OpaquePointer) { self.statement = statement }
    mutating func add(_ value: some SQLiteValue) {
        index += 1
        value.bind(to: statement, at: index)
    }
}

/// The current row of a statement, read by column position.
struct SQLiteRow {
    let statement: OpaquePointer

    func int(_ i: Int32) -> Int64 { sqlite3_column_int64(statement, i) }
    func optionalInt(_ i: Int32) -> Int64? { sqlite3_column_type(statement, i) == SQLITE_NULL ? nil : int(i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(statement, i) }
    /// The column's value as SQLite keeps it: NULL, an integer, a real or text.
    func value(_ i: Int32) -> FieldValue {
        switch sqlite3_column_type(statement, i) {
        case SQLITE_NULL: .null
        case SQLITE_INTEGER: .int(int(i))
        case SQLITE_FLOAT: .double(double(i))
        default: .text(text(i))
        }
    }
    func text(_ i: Int32) -> String { optionalText(i) ?? "" }
    func optionalText(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(statement, i) else { return nil }  // NULL
        return String(
            decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement, i))), as: UTF8.self)
    }
}
