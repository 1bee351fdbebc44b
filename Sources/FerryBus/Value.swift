import CGLib
import CFerryShim

/// A D-Bus value in Swift terms: the one place GVariants are built and read.
public indirect enum Value: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        public var key: String
        public var value: Value
        public init(_ key: String, _ value: Value) { self.key = key; self.value = value }
    }

    case string(String)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case bytes([UInt8])
    case strings([String])
    /// a{sv}
    case dict([String: Value])
    /// a{sv} whose entries the writer gives in key order: written as they are, with no hashing
    /// or sorting (a page of 100 tasks is 1,900 entries). Read back, it is a `.dict`.
    case fields([Field])
    /// a{ss}
    case stringDict([String: String])
    /// Any other homogeneous array; `elementType` is its GVariant element type.
    case array([Value], elementType: String)
    case tuple([Value])
    /// h: the index of a file descriptor in the message's descriptor list.
    case handle(Int32)

    public var typeString: String {
        switch self {
        case .string: return "s"
        case .bool: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .bytes: return "ay"
        case .strings: return "as"
        case .dict: return "a{sv}"
        case .stringDict: return "a{ss}"
        case .fields: return "a{sv}"
        case .array(_, let t): return "a" + t
        case .tuple(let items): return "(" + items.map(\.typeString).joined() + ")"
        case .handle: return "h"
        }
    }

    /// A new floating GVariant, made with GLib's own constructors (clients send small calls;
    /// the agent writes its messages with sd-bus, `BusMessage`).
    public func makeGVariant() -> OpaquePointer {
        switch self {
        case .string(let s): return g_variant_new_string(s)
        case .bool(let b): return g_variant_new_boolean(b ? 1 : 0)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(gint64(v))
        case .uint64(let v): return g_variant_new_uint64(guint64(v))
        case .double(let v): return g_variant_new_double(v)
        case .handle(let v): return g_variant_new_handle(v)
        case .bytes(let b):
            // The type's C string must outlive the call (ferry_variant_type only casts it).
            return b.withUnsafeBytes { bytes in
                "y".withCString {
                    g_variant_new_fixed_array(ferry_variant_type($0), bytes.baseAddress, gsize(b.count), 1)
                }
            }
        case .strings(let items): return Self.array("s", items.map { g_variant_new_string($0) })
        case .dict(let d):
            return Self.array(
                "{sv}",
                d.keys.sorted().map {
                    g_variant_new_dict_entry(g_variant_new_string($0), g_variant_new_variant(d[$0]!.makeGVariant()))
                })
        case .fields(let f):
            return Self.array(
                "{sv}",
                f.map {
                    g_variant_new_dict_entry(
                        g_variant_new_string($0.key), g_variant_new_variant($0.value.makeGVariant()))
                })
        case .stringDict(let d):
            return Self.array(
                "{ss}",
                d.keys.sorted().map { g_variant_new_dict_entry(g_variant_new_string($0), g_variant_new_string(d[$0]!)) }
            )
        case .array(let items, let type): return Self.array(type, items.map { $0.makeGVariant() })
        case .tuple(let items):
            var children: [OpaquePointer?] = items.map { $0.makeGVariant() }
            return g_variant_new_tuple(&children, gsize(children.count))
        }
    }

    /// An array of `elementType` holding `children` (floating; each child is consumed).
    private static func array(_ elementType: String, _ children: [OpaquePointer]) -> OpaquePointer {
        var items: [OpaquePointer?] = children
        return elementType.withCString { g_variant_new_array(ferry_variant_type($0), &items, gsize(items.count)) }
    }

    /// Reads any GVariant (not consumed). Variants are unwrapped. A basic value is told by its
    /// class (a character): no type string is made for it (a listing reads millions of them).
    public init(_ v: OpaquePointer) {
        switch g_variant_classify(v) {
        case G_VARIANT_CLASS_STRING, G_VARIANT_CLASS_OBJECT_PATH, G_VARIANT_CLASS_SIGNATURE:
            self = .string(String(cString: g_variant_get_string(v, nil)))
        case G_VARIANT_CLASS_BOOLEAN: self = .bool(g_variant_get_boolean(v) != 0)
        case G_VARIANT_CLASS_INT32: self = .int32(g_variant_get_int32(v))
        case G_VARIANT_CLASS_UINT32: self = .uint32(g_variant_get_uint32(v))
        case G_VARIANT_CLASS_INT64: self = .int64(Int64(g_variant_get_int64(v)))
        case G_VARIANT_CLASS_UINT64: self = .uint64(UInt64(g_variant_get_uint64(v)))
        case G_VARIANT_CLASS_INT16: self = .int32(Int32(g_variant_get_int16(v)))
        case G_VARIANT_CLASS_UINT16: self = .uint32(UInt32(g_variant_get_uint16(v)))
        case G_VARIANT_CLASS_BYTE: self = .uint32(UInt32(g_variant_get_byte(v)))
        case G_VARIANT_CLASS_DOUBLE: self = .double(g_variant_get_double(v))
        case G_VARIANT_CLASS_HANDLE: self = .handle(g_variant_get_handle(v))
        case G_VARIANT_CLASS_VARIANT:
            let inner = g_variant_get_variant(v)!
            defer { g_variant_unref(inner) }
            self = Value(inner)
        case G_VARIANT_CLASS_TUPLE, G_VARIANT_CLASS_DICT_ENTRY:
            self = .tuple(Self.children(v))
        default:
            self = Self.container(v, type: String(cString: g_variant_get_type_string(v)))
        }
    }

    /// An array (or a maybe, read as an empty string) by its type.
    private static func container(_ v: OpaquePointer, type: String) -> Value {
        if type == "ay" {
            var n: gsize = 0
            let p = g_variant_get_fixed_array(v, &n, 1)
            return .bytes(n == 0 || p == nil ? [] : Array(UnsafeRawBufferPointer(start: p, count: Int(n))))
        }
        guard type.hasPrefix("a") else { return .string("") }
        let children = Self.children(v)
        if type == "as" { return .strings(children.compactMap(\.stringValue)) }
        guard type.hasPrefix("a{s") else { return .array(children, elementType: String(type.dropFirst())) }
        var d: [String: Value] = [:]
        for case .tuple(let kv) in children where kv.count == 2 {
            if let k = kv[0].stringValue { d[k] = kv[1] }
        }
        return type == "a{ss}" ? .stringDict(d.compactMapValues(\.stringValue)) : .dict(d)
    }

    static func children(_ v: OpaquePointer) -> [Value] {
        let n = Int(g_variant_n_children(v))
        var out: [Value] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            let c = g_variant_get_child_value(v, gsize(i))!
            out.append(Value(c))
            g_variant_unref(c)
        }
        return out
    }

    // Typed accessors: nil when the value has another type.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var int64Value: Int64? {
        switch self {
        case .int64(let v): return v
        case .int32(let v): return Int64(v)
        case .uint32(let v): return Int64(v)
        case .uint64(let v): return v <= UInt64(Int64.max) ? Int64(v) : nil
        default: return nil
        }
    }
    public var uint64Value: UInt64? {
        switch self {
        case .uint64(let v): return v
        case .uint32(let v): return UInt64(v)
        case .int64(let v): return v >= 0 ? UInt64(v) : nil
        case .int32(let v): return v >= 0 ? UInt64(v) : nil
        default: return nil
        }
    }
    public var dictValue: [String: Value]? {
        switch self {
        case .dict(let d): return d
        case .fields(let f): return Dictionary(f.map { ($0.key, $0.value) }) { _, last in last }
        default: return nil
        }
    }
    public var stringDictValue: [String: String]? {
        switch self {
        case .stringDict(let d): return d
        case .dict(let d): return d.compactMapValues(\.stringValue)
        default: return nil
        }
    }
    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b }; return nil }
    public var arrayValue: [Value]? {
        switch self {
        case .array(let a, _): return a
        case .strings(let s): return s.map { .string($0) }
        default: return nil
        }
    }
    public var tupleValue: [Value]? { if case .tuple(let t) = self { return t }; return nil }
}
