import FerryCore
import Foundation
import GRDBSQLite

/// The current row of a statement selecting `Store.taskColumns`, as a TaskRecord. Reads
/// SQLite's column values directly (no per-value boxing or generic decoding).
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
}
