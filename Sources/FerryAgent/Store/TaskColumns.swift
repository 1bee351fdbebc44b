import FerryBus
import FerryCore
import FoundationEssentials

/// A task row by position (no per-value boxing or lookup by name): the current row of a
/// statement selecting `selectList` as a TaskRecord, and a TaskRecord bound to the parameters
/// of the store's INSERT and UPDATE. The columns are `TaskField.stored`'s.
enum TaskColumns {
    private static let fields = TaskField.stored.filter { $0.column != "id" }
    /// Where each of `fields` lies in a record, and whether the store keeps it as JSON text.
    private static let places = fields.map { $0.inRecord! }
    private static let isDictionary = fields.map(\.isDictionary)

    static func record(_ row: SQLiteRow) -> TaskRecord {
        var r = TaskRecord(session: "", url: "", host: "", state: .failed)
        r.id = row.int(0)
        withUnsafeMutablePointer(to: &r) { r in
            for i in places.indices { _ = places[i].write(value(row, Int32(i + 1), isDictionary[i]), r) }
        }
        return r
    }

    /// A column's value as its field has it (a dictionary is kept as JSON text).
    private static func value(_ row: SQLiteRow, _ i: Int32, _ isDictionary: Bool) -> FieldValue {
        let v = row.value(i)
        guard isDictionary, case .text(let text) = v else { return v }
        if text == "{}" || text.isEmpty { return .dict([:]) }
        return .dict((try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:])
    }

    /// The key columns a statement sets: an INSERT all (session, host, state); an UPDATE all but
    /// the session, or none (a running task's progress).
    enum Keys { case all, allButSession, none }

    /// Binds `r`'s columns in the order of the store's INSERT and UPDATE, the keys left out as
    /// `keys` says, then its id, and runs the statement to its end.
    static func execute(_ statement: SQLiteStatement, binding r: TaskRecord, keys: Keys = .all) throws {
        try statement.run { bind(&$0, r, keys: keys) }
    }

    /// Binds several rows to a statement with as many rows of parameters (INSERT … VALUES (…), (…)).
    static func execute(_ statement: SQLiteStatement, binding rows: ArraySlice<TaskRecord>) throws {
        try statement.run { b in for r in rows { bind(&b, r, keys: .all) } }
    }

    /// The columns a task row has besides its id, in the order `bind` binds them and `record`
    /// reads them after the id.
    static let names = fields.map { $0.column! }

    /// The columns the key columns are (`Keys` leaves them out of an UPDATE).
    static let session = "session", keyColumns: Set<String> = ["host", "state"]
    /// Which of `names` a statement for `keys` binds.
    private static func bound(_ keys: Keys) -> [Bool] {
        switch keys {
        case .all: bindsAll
        case .allButSession: bindsAllButSession
        case .none: bindsNoKey
        }
    }
    private static let bindsAll = names.map { _ in true }
    private static let bindsAllButSession = names.map { $0 != session }
    private static let bindsNoKey = names.map { $0 != session && !keyColumns.contains($0) }

    /// How many parameters `bind` takes with every key (the columns and the id).
    static let count = names.count + 1

    /// The SELECT list `record` reads: the id, then `names`.
    static let selectList = (["id"] + names).joined(separator: ", ")

    /// The INSERT's column list (`names`, then the id), as `bind` binds them.
    static let insertList = (names + ["id"]).joined(separator: ", ")

    /// The UPDATE's SET clause for `keys` (never the session; without host and state for `.none`).
    static func setClause(_ keys: Keys) -> String {
        zip(names, bound(keys)).filter(\.1).map { "\($0.0)=?" }.joined(separator: ", ")
    }

    private static func bind(_ b: inout SQLiteBinder, _ r: TaskRecord, keys: Keys) {
        let set = bound(keys)
        withUnsafePointer(to: r) { r in
            for i in places.indices where set[i] { add(places[i].read(r), to: &b) }
        }
        b.add(r.id)
    }

    private static func add(_ value: FieldValue, to b: inout SQLiteBinder) {
        switch value {
        case .null: b.add(String?.none)
        case .int(let n): b.add(n)
        case .double(let d): b.add(d)
        case .text(let s): b.add(s)
        case .bool(let v): b.add(Int64(v ? 1 : 0))
        case .dict(let d): b.add(Store.headersJSON(d))
        }
    }
}
