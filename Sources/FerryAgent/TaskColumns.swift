import FerryCore
import Foundation
import GRDB
import GRDBSQLite

/// A task row by position, straight through SQLite's C API (no per-value boxing or generic
/// decoding): the current row of a statement selecting `Store.taskColumns` as a TaskRecord, and
/// a TaskRecord bound to the parameters of the store's INSERT and UPDATE.
struct TaskColumns {
    let statement: OpaquePointer

    init(_ statement: OpaquePointer) { self.statement = statement }

    private func int(_ i: Int32) -> Int64 { sqlite3_column_int64(statement, i) }
    private func optionalInt(_ i: Int32) -> Int64? { sqlite3_column_type(statement, i) == SQLITE_NULL ? nil : int(i) }
    private func text(_ i: Int32) -> String { optionalText(i) ?? "" }
    private func optionalText(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(statement, i) else { return nil }   // NULL
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement, i))), as: UTF8.self)
    }

    func record() -> TaskRecord {
        let headersJSON = text(16)
        let headers = headersJSON == "{}" || headersJSON.isEmpty ? [:]
            : (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8))) ?? [:]
        var r = TaskRecord(
            id: int(0), session: text(1), url: text(2), host: text(3),
            state: TaskState(rawValue: text(4)) ?? .failed,
            reason: optionalText(5).flatMap(WaitReason.init(rawValue:)),
            received: int(6), expected: optionalInt(7), etag: optionalText(8),
            lastModified: optionalText(9), directory: optionalText(10), output: optionalText(11),
            file: optionalText(12), suggestedName: optionalText(13), sha256: optionalText(14),
            description: text(15), headers: headers, error: optionalText(17), errorName: optionalText(18),
            attempts: Int(int(19)), retryAt: optionalInt(20), created: int(21), updated: int(22))
        r.kind = TaskRecord.Kind(rawValue: text(23)) ?? .download
        r.method = optionalText(24)
        r.uploadFile = optionalText(25)
        return r
    }

    /// Binds `r`'s columns in the order of the store's INSERT and UPDATE (session … upload_file),
    /// then its id, and runs the statement to its end (a row write of the open transaction:
    /// nothing for GRDB to track; a failure comes back as GRDB's DatabaseError, as before).
    static func execute(_ sql: OpaquePointer, on db: OpaquePointer, binding r: TaskRecord) throws {
        sqlite3_reset(sql)
        var i: Int32 = 0
        func text(_ s: String?) {
            i += 1
            guard var s else { sqlite3_bind_null(sql, i); return }
            s.withUTF8 { u in
                u.withMemoryRebound(to: CChar.self) { c in _ = sqlite3_bind_text(sql, i, c.baseAddress ?? emptyText, Int32(c.count), transient) }
            }
        }
        func int(_ v: Int64?) {
            i += 1
            if let v { sqlite3_bind_int64(sql, i, v) } else { sqlite3_bind_null(sql, i) }
        }
        text(r.session); text(r.url); text(r.host); text(r.state.rawValue); text(r.reason?.rawValue)
        int(r.received); int(r.expected); text(r.etag); text(r.lastModified); text(r.directory)
        text(r.output); text(r.file); text(r.suggestedName); text(r.sha256); text(r.description)
        text(Store.headersJSON(r.headers)); text(r.error); text(r.errorName); int(Int64(r.attempts)); int(r.retryAt)
        int(r.created); int(r.updated); text(r.kind.rawValue); text(r.method); text(r.uploadFile)
        int(r.id)
        let code = sqlite3_step(sql)
        sqlite3_reset(sql)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// An empty string is a pointer to a NUL (a null pointer would bind NULL).
    private static let emptyText = UnsafePointer<CChar>(strdup("")!)
    /// SQLite copies the bytes (a Swift string's pointer lives only as long as the call).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
