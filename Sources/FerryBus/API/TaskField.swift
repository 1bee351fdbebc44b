import FerryCore

/// A task field's value in the terms its three forms share (the store's column, the bus's
/// value, the CLI's JSON): each form converts from and to this, never from the field's type.
public enum FieldValue: Sendable, Equatable {
    case null, int(Int64), double(Double), text(String), bool(Bool), dict([String: String])
}

/// One field of a task: its column in the store, its key in the API (which is its key in the
/// CLI's JSON too), where the API shows it, and where it lies in a task. `TaskField.all` lists
/// them; the store's SQL, `TaskInfo`'s dictionary and row, and the CLI's JSON are made from it.
///
/// A field is read and written at its offset in the task, by its `FieldType`: the store and the
/// bus go through every field of every task they carry, where a key path would cost a call into
/// the runtime and a closure a reference count, each time.
public struct TaskField: Sendable {
    /// Where the CLI's JSON prints the field: in every task of `list` and `show` (`list`), in
    /// `show`'s and `download --json`'s alone (`detail`), there only when the field `with` is
    /// set (an upload's reply), or nowhere.
    public enum JSONPlace: Sendable, Equatable { case none, list, detail, detailWith(TaskInfo.Key) }

    /// The store's column (nil: not stored; the app is the session's).
    public let column: String?
    /// The API's key (nil: the agent's own, never shown), and its name.
    public let key: TaskInfo.Key?
    public let name: String
    /// The key's D-Bus type (empty: not on the bus).
    public let signature: String
    /// In ListTaskRows' struct, in the order of `TaskField.all`.
    public let inRow: Bool
    public let json: JSONPlace
    /// A key the XML marks optional is sent when the value is not its default; `sentWith` makes
    /// it go with another key instead (an upload's reply: all its keys or none).
    public let sentWith: TaskInfo.Key?
    /// A time in µs that the CLI's JSON prints in seconds.
    public let jsonInSeconds: Bool
    public let type: FieldType
    /// The value of a new task, as the record's initialiser gives it.
    public let defaultValue: FieldValue
    /// Where the field lies in a `TaskInfo`, and in a `TaskRecord` (nil: not in the record).
    public let inInfo: Place, inRecord: Place?

    /// A field's type and offset: all a read or a write of it needs, and nothing to count the
    /// references of (the store and the bus keep arrays of these for their loops).
    public struct Place: Sendable {
        public let type: FieldType
        let offset: Int

        /// The field of the value at `base` (a `TaskInfo` or a `TaskRecord`, as the place is one's).
        public func read(_ base: UnsafeRawPointer) -> FieldValue { type.read(base + offset) }
        /// false: `v` is not a value of the field's type, and the field is left as it was.
        public func write(_ v: FieldValue, _ base: UnsafeMutableRawPointer) -> Bool { type.write(v, base + offset) }
    }

    /// A field of the record: stored in the column named `column`, else as its key is named
    /// (`error-name`: `error_name`); `key` nil: kept by the agent and never shown.
    init<V: TaskFieldValue>(
        _ path: WritableKeyPath<TaskRecord, V>, _ key: TaskInfo.Key?, column: String? = nil,
        row: Bool = false, json: JSONPlace = .none, sentWith: TaskInfo.Key? = nil, jsonInSeconds: Bool = false
    ) {
        guard let inRecord = MemoryLayout<TaskRecord>.offset(of: path),
            let record = MemoryLayout<TaskInfo>.offset(of: \TaskInfo.record)
        else { fatalError("\(path) is not a stored property of TaskRecord") }
        self.column = column ?? key.map { $0.rawValue.replacing("-", with: "_") }
        self.key = key
        name = key?.rawValue ?? self.column!
        signature = key?.signature ?? ""
        inRow = row
        self.json = json
        self.sentWith = sentWith
        self.jsonInSeconds = jsonInSeconds
        let type = V.fieldType
        self.type = type
        inInfo = Place(type: type, offset: record + inRecord)
        self.inRecord = Place(type: type, offset: inRecord)
        let blank = TaskRecord(session: "", url: "", host: "")
        defaultValue = withUnsafePointer(to: blank) { type.read(UnsafeRawPointer($0) + inRecord) }
    }

    /// A field the API shows that the store does not keep.
    init(shown path: WritableKeyPath<TaskInfo, String>, _ key: TaskInfo.Key, json: JSONPlace) {
        guard let offset = MemoryLayout<TaskInfo>.offset(of: path) else { fatalError("\(path) is not stored") }
        column = nil
        self.key = key
        name = key.rawValue
        signature = key.signature
        inRow = false
        self.json = json
        sentWith = nil
        jsonInSeconds = false
        type = .text
        defaultValue = .text("")
        inInfo = Place(type: .text, offset: offset)
        inRecord = nil
    }

    public var isDictionary: Bool { type == .dictionary || type == .optionalDictionary }

    /// The field of a task as shown, and set into one (false: not a value of the field's type).
    public func value(_ t: TaskInfo) -> FieldValue { withUnsafePointer(to: t) { inInfo.read($0) } }
    public func setValue(_ t: inout TaskInfo, _ v: FieldValue) -> Bool {
        withUnsafeMutablePointer(to: &t) { inInfo.write(v, $0) }
    }
}

/// A Swift type a task field has: its `FieldType` says how it lies in memory.
public protocol TaskFieldValue {
    static var fieldType: FieldType { get }
}
/// A type whose optional a field may have.
public protocol OptionalTaskFieldValue: TaskFieldValue {
    static var optionalFieldType: FieldType { get }
}

extension Optional: TaskFieldValue where Wrapped: OptionalTaskFieldValue {
    public static var fieldType: FieldType { Wrapped.optionalFieldType }
}
extension String: OptionalTaskFieldValue {
    public static var fieldType: FieldType { .text }
    public static var optionalFieldType: FieldType { .optionalText }
}
extension Int64: OptionalTaskFieldValue {
    public static var fieldType: FieldType { .int64 }
    public static var optionalFieldType: FieldType { .optionalInt64 }
}
extension Int: OptionalTaskFieldValue {
    public static var fieldType: FieldType { .int }
    public static var optionalFieldType: FieldType { .optionalInt }
}
extension Dictionary: OptionalTaskFieldValue, TaskFieldValue where Key == String, Value == String {
    public static var fieldType: FieldType { .dictionary }
    public static var optionalFieldType: FieldType { .optionalDictionary }
}
extension Double: TaskFieldValue { public static var fieldType: FieldType { .double } }
extension Bool: TaskFieldValue { public static var fieldType: FieldType { .bool } }
extension TaskState: TaskFieldValue { public static var fieldType: FieldType { .state } }
extension TaskRecord.Kind: TaskFieldValue { public static var fieldType: FieldType { .kind } }
extension WaitReason: OptionalTaskFieldValue {
    public static var fieldType: FieldType { fatalError("a wait reason is optional") }
    public static var optionalFieldType: FieldType { .reason }
}
extension ResumableProtocol: OptionalTaskFieldValue {
    public static var fieldType: FieldType { fatalError("a resumable protocol is optional") }
    public static var optionalFieldType: FieldType { .resumable }
}
