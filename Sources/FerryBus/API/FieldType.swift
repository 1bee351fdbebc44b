import FerryCore

/// The Swift types a task's fields have, and how a value of each is read from and written to
/// the memory of the property that holds it (the property's own type: `TaskField` takes it from
/// the key path, so reads and writes match it).
public enum FieldType: Sendable, Equatable {
    case text, optionalText, int64, optionalInt64, int, optionalInt, double, bool
    case dictionary, optionalDictionary, state, kind, reason, resumable

    /// Absent values are `.null` (an empty text or a size of -1 on the bus reads as one).
    public var isOptional: Bool {
        switch self {
        case .optionalText, .optionalInt64, .optionalInt, .optionalDictionary, .reason, .resumable: true
        default: false
        }
    }

    func read(_ p: UnsafeRawPointer) -> FieldValue {
        switch self {
        case .text: .text(p.load(as: String.self))
        case .optionalText: p.load(as: String?.self).map(FieldValue.text) ?? .null
        case .int64: .int(p.load(as: Int64.self))
        case .optionalInt64: p.load(as: Int64?.self).map(FieldValue.int) ?? .null
        case .int: .int(Int64(p.load(as: Int.self)))
        case .optionalInt: p.load(as: Int?.self).map { .int(Int64($0)) } ?? .null
        case .double: .double(p.load(as: Double.self))
        case .bool: .bool(p.load(as: Bool.self))
        case .dictionary: .dict(p.load(as: [String: String].self))
        case .optionalDictionary: p.load(as: [String: String]?.self).map(FieldValue.dict) ?? .null
        case .state: .text(p.load(as: TaskState.self).rawValue)
        case .kind: .text(p.load(as: TaskRecord.Kind.self).rawValue)
        case .reason: p.load(as: WaitReason?.self).map { .text($0.rawValue) } ?? .null
        case .resumable: p.load(as: ResumableProtocol?.self).map { .text($0.rawValue) } ?? .null
        }
    }

    /// false: `v` is not a value of this type (a state this client does not know), and the
    /// memory is left as it was.
    func write(_ v: FieldValue, _ p: UnsafeMutableRawPointer) -> Bool {
        func store<T>(_ value: T) -> Bool {
            p.assumingMemoryBound(to: T.self).pointee = value
            return true
        }
        switch (self, v) {
        case (.text, .text(let s)): return store(s)
        case (.optionalText, .text(let s)): return store(String?.some(s))
        case (.optionalText, .null): return store(String?.none)
        case (.int64, .int(let n)): return store(n)
        case (.optionalInt64, .int(let n)): return store(Int64?.some(n))
        case (.optionalInt64, .null): return store(Int64?.none)
        case (.int, .int(let n)): return store(Int(n))
        case (.optionalInt, .int(let n)): return store(Int?.some(Int(n)))
        case (.optionalInt, .null): return store(Int?.none)
        case (.double, .double(let d)): return store(d)
        case (.double, .int(let n)): return store(Double(n))  // SQLite hands back a whole REAL as it likes
        case (.bool, .bool(let b)): return store(b)
        case (.bool, .int(let n)): return store(n != 0)  // SQLite keeps a boolean as 0 or 1
        case (.dictionary, .dict(let d)): return store(d)
        case (.optionalDictionary, .dict(let d)): return store([String: String]?.some(d))
        case (.optionalDictionary, .null): return store([String: String]?.none)
        case (.state, .text(let s)): return TaskState(rawValue: s).map(store) ?? false
        case (.kind, .text(let s)): return TaskRecord.Kind(rawValue: s).map(store) ?? false
        case (.reason, .text(let s)): return WaitReason(rawValue: s).map { store(WaitReason?.some($0)) } ?? false
        case (.reason, .null): return store(WaitReason?.none)
        case (.resumable, .text(let s)):
            return ResumableProtocol(rawValue: s).map { store(ResumableProtocol?.some($0)) } ?? false
        case (.resumable, .null): return store(ResumableProtocol?.none)
        default: return false
        }
    }
}
