import FerryCore

/// The task as the API shows it (a{sv} over D-Bus, a struct in ListTaskRows, JSON in the CLI):
/// the record's fields `TaskField.all` gives a key, and the app. Read its fields as the record's
/// (`info.state`); the agent's own fields are at their defaults in a task read from the bus.
@dynamicMemberLookup
public struct TaskInfo: Sendable, Equatable {
    public var record: TaskRecord
    /// The sandboxed app the task belongs to (empty: the host's). In GetTask and ListTasks only.
    public var app: String

    /// The task as the agent shows it: its URL without credentials, its method spelled out.
    public init(_ r: TaskRecord, app: String = "") {
        record = r
        record.url = DownloadURL.printable(r.url)
        record.method = r.effectiveMethod
        self.app = app
    }

    /// Inlinable: a client's `info.state` then compiles to the field's access, not a key path
    /// applied at run time.
    @inlinable public subscript<T>(dynamicMember path: WritableKeyPath<TaskRecord, T>) -> T {
        get { record[keyPath: path] }
        set { record[keyPath: path] = newValue }
    }

    /// GET or PUT when the task did not name one.
    @inlinable public var method: String {
        get { record.effectiveMethod }
        set { record.method = newValue }
    }

    /// Equal as the API shows them.
    public static func == (a: TaskInfo, b: TaskInfo) -> Bool {
        TaskField.shown.allSatisfy { $0.value(a) == $0.value(b) }
    }

    public var dictionary: [String: Value] { Value.fields(fields).dictValue ?? [:] }

    /// The entries of `dictionary` in key order, as the agent writes them (no hashing, no sort).
    public var fields: [Value.Field] {
        let d = Self.dictionaryForm
        var out: [Value.Field] = []
        out.reserveCapacity(d.places.count)
        withUnsafePointer(to: self) { info in
            for i in d.places.indices {
                let v = d.places[i].read(info)
                // A key the XML marks optional goes when its value is not a new task's (priority
                // 0.5 and an absent limit stay out of every page), or with the key it goes with.
                let with = d.with[i]
                guard with >= 0 ? d.places[with].read(info) != .null : d.always[i] || v != d.defaults[i] else {
                    continue
                }
                out.append(.init(d.names[i], Self.bus(v, d.signatures[i])))
            }
        }
        return out
    }

    /// One element of ListTaskRows: the fields of `dictionary`, in the interface's order.
    public static let rowType = "(" + TaskField.row.map(\.signature).joined() + ")"

    public var row: Value {
        let r = Self.rowForm
        return .tuple(
            withUnsafePointer(to: self) { info in
                r.places.indices.map { Self.bus(r.places[$0].read(info), r.signatures[$0]) }
            })
    }

    /// nil for a task this client cannot show (a state a newer agent has); a malformed row throws.
    public init?(row: Value) throws {
        var info = Self.blank
        let r = Self.rowForm
        let known = try BusReader.members(of: row, reading: "a task row") { reader in
            var known = true
            for i in r.places.indices {
                let signature = r.signatures[i], type = r.places[i].type
                let v = try reader.read(signature) { $0.typeString == signature ? Self.field($0, type) : nil }
                known = withUnsafeMutablePointer(to: &info) { r.places[i].write(v, $0) } && known
            }
            return known
        }
        guard known else { return nil }
        self = info
    }

    /// The fields of the dictionary and of the row, in arrays a loop reads without copying a
    /// `TaskField` (each copy counts references: a page of 100 tasks reads 2,500 fields).
    struct Form {
        let places: [TaskField.Place], names: [String], signatures: [String], keys: [Key]
        let always: [Bool], defaults: [FieldValue], with: [Int]
        init(_ fields: [TaskField]) {
            places = fields.map(\.inInfo); names = fields.map(\.name); signatures = fields.map(\.signature)
            keys = fields.map { $0.key! }; always = fields.map { $0.key!.required };
            defaults = fields.map(\.defaultValue)
            with = fields.map { f in f.sentWith.map { k in fields.firstIndex { $0.key == k } ?? -1 } ?? -1 }
        }
    }
    static let dictionaryForm = Form(TaskField.shown)
    static let rowForm = Form(TaskField.row)

    /// A task read from the bus starts as a new one: what does not come stays at its default.
    private static let blank = TaskInfo(record: TaskRecord(session: "", url: "", host: ""), app: "")

    private init(record: TaskRecord, app: String) {
        self.record = record
        self.app = app
    }

    /// GetTask's and ListTasks' dictionary: every key the XML says is always sent, each of its
    /// type (an unknown kind or state, a newer agent's, is refused too).
    public init(bus d: [String: Value]) throws {
        let f = try BusFields<Key>(d, reading: "a task")
        self = Self.blank
        let form = Self.dictionaryForm
        for i in form.places.indices {
            let type = form.places[i].type
            guard let v = f.optional(form.keys[i], { Self.field($0, type) }) else { continue }
            guard withUnsafeMutablePointer(to: &self, { form.places[i].write(v, $0) }) else {
                let text = if case .text(let s) = v { String(s.prefix(16)) } else { "" }
                throw FerryError(.invalidArgument, "a task of an unknown \(form.names[i]) (\(text))")
            }
        }
    }

    /// A field's value as the bus carries it, of the key's type: an absent one is the empty
    /// text or -1.
    static func bus(_ v: FieldValue, _ signature: String) -> Value {
        switch v {
        case .int(let n):
            switch signature {
            case "t": return .uint64(UInt64(clamping: n))
            case "u": return .uint32(UInt32(clamping: n))
            case "i": return .int32(Int32(clamping: n))
            default: return .int64(n)
            }
        case .text(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .double(let d): return .double(d)
        case .dict(let d): return .stringDict(d)
        case .null:
            switch signature {
            case "s": return .string("")
            case "a{ss}": return .stringDict([:])
            default: return bus(.int(-1), signature)
            }
        }
    }

    /// A value the bus carried as the field's (nil: not of its type).
    static func field(_ v: Value, _ type: FieldType) -> FieldValue? {
        switch v {
        case .string(let s): return type.isOptional && s.isEmpty ? .null : .text(s)
        case .bool(let b): return .bool(b)
        case .double(let d): return .double(d)
        case .stringDict(let d): return .dict(d)
        default:
            guard let n = v.int64Value else { return nil }
            return type.isOptional && n == -1 ? .null : .int(n)
        }
    }
}
