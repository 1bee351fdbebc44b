import FerryCore

/// A key of one of the API's a{sv}: generated from the XML's `dev.ferry.Swift.Keys` as the
/// dictionary type's `Key` (`TaskInfo.Key.retryAt`: "retry-at", x, may be absent).
public protocol BusKey: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// Its D-Bus type.
    var signature: String { get }
    /// Always sent by the agent.
    var required: Bool { get }
}

/// An a{sv} the agent sent, read by its keys. Every key the XML says is always there must be,
/// and every key present must have its type, or the whole dictionary is refused naming the key:
/// no reader fills in a default for a value that did not come. Keys this client does not know
/// (a newer agent's) are left alone.
public struct BusFields<K: BusKey> {
    private let values: [String: Value]
    private let what: String

    public init(_ d: [String: Value], reading what: String) throws {
        for k in K.allCases {
            guard let v = d[k.rawValue] else {
                if k.required { throw FerryError(.invalidArgument, "\(what): '\(k.rawValue)' is missing") }
                continue
            }
            guard v.typeString == k.signature else {
                throw FerryError(
                    .invalidArgument, "\(what): '\(k.rawValue)' must be \(k.signature), not \(v.typeString)")
            }
        }
        values = d
        self.what = what
    }

    /// A key's value; one that may be absent is nil when it is.
    public func optional<T>(_ k: K, _ get: (Value) -> T?) -> T? { values[k.rawValue].flatMap(get) }
    /// A key that is always sent.
    public func value<T>(_ k: K, _ get: (Value) -> T?) throws -> T {
        guard let v = optional(k, get) else {
            throw FerryError(.invalidArgument, "\(what): '\(k.rawValue)' is missing")
        }
        return v
    }

    public func string(_ k: K) throws -> String { try value(k) { $0.stringValue } }
    public func bool(_ k: K) throws -> Bool { try value(k) { $0.boolValue } }
    public func int64(_ k: K) throws -> Int64 { try value(k) { $0.int64Value } }
    public func uint64(_ k: K) throws -> UInt64 { try value(k) { $0.uint64Value } }
    /// u: a count.
    public func count(_ k: K) throws -> Int { Int(try int64(k)) }
    public func dict(_ k: K) throws -> [String: Value] { try value(k) { $0.dictValue } }
    /// An empty string is none.
    public func text(_ k: K) throws -> String? { let s = try string(k); return s.isEmpty ? nil : s }
}

extension Value.Field {
    /// An entry of an a{sv} the agent writes, by its key.
    @inlinable public init<K: BusKey>(_ key: K, _ value: Value) { self.init(key.rawValue, value) }
}
