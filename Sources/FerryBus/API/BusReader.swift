import FerryCore

/// Reads a message's values (a call's arguments, a reply, a signal, a struct's members) in the
/// order the interface XML gives them, each as the type it must have: a value missing or of
/// another type is an InvalidArgument naming what was expected, never a silent default.
public struct BusReader {
    @usableFromInline var values: ArraySlice<Value>
    @usableFromInline var position = 0
    /// What is being read, for error messages ("GetTask", "a task row").
    @usableFromInline let what: String

    @inlinable public init(_ values: [Value], reading what: String) {
        self.values = values[...]
        self.what = what
    }

    @inlinable mutating func next(_ expected: String) throws -> Value {
        position += 1
        guard let v = values.popFirst() else {
            throw FerryError(.invalidArgument, "\(what): value \(position) (\(expected)) is missing")
        }
        return v
    }

    /// Refuses values left over after the last one read.
    public func finish() throws {
        guard values.isEmpty else {
            throw FerryError(.invalidArgument, "\(what): \(values.count) value(s) more than the \(position) expected")
        }
    }

    @usableFromInline func wrong(_ expected: String, _ v: Value) -> FerryError {
        FerryError(.invalidArgument, "\(what): value \(position) must be \(expected), not \(v.typeString)")
    }

    @inlinable mutating func read<T>(_ expected: String, _ get: (Value) -> T?) throws -> T {
        let v = try next(expected)
        guard let t = get(v) else { throw wrong(expected, v) }
        return t
    }

    @inlinable public mutating func string() throws -> String { try read("s") { $0.stringValue } }
    @inlinable public mutating func bool() throws -> Bool { try read("b") { $0.boolValue } }
    /// t: a task id (the agent's ids fit Int64).
    @inlinable public mutating func task() throws -> Int64 {
        try read("t") { if case .uint64 = $0 { $0.int64Value } else { nil } }
    }
    @inlinable public mutating func uint64() throws -> UInt64 {
        try read("t") { if case .uint64(let v) = $0 { v } else { nil } }
    }
    @inlinable public mutating func int64() throws -> Int64 {
        try read("x") { if case .int64(let v) = $0 { v } else { nil } }
    }
    /// u: a count or a limit.
    @inlinable public mutating func count() throws -> Int {
        try read("u") { if case .uint32(let v) = $0 { Int(v) } else { nil } }
    }
    @inlinable public mutating func bytes() throws -> [UInt8] { try read("ay") { $0.bytesValue } }
    @inlinable public mutating func strings() throws -> [String] {
        try read("as") { if case .strings(let s) = $0 { s } else { nil } }
    }
    @inlinable public mutating func dict() throws -> [String: Value] { try read("a{sv}") { $0.dictValue } }
    /// h: the index of a descriptor sent with the message.
    @inlinable public mutating func handle() throws -> Int32 {
        try read("h") { if case .handle(let h) = $0 { h } else { nil } }
    }
    /// An array of `elementType`, each element read by `element`.
    public mutating func array<T>(of elementType: String, _ element: (Value) throws -> T) throws -> [T] {
        let v = try next("a" + elementType)
        guard let items = v.arrayValue, v.typeString == "a" + elementType else {
            throw wrong("a" + elementType, v)
        }
        return try items.map(element)
    }
    /// A struct's members, read by `members` from a reader of their own.
    public mutating func tuple<T>(_ members: (inout BusReader) throws -> T) throws -> T {
        let v = try next("a struct")
        guard let items = v.tupleValue else { throw wrong("a struct", v) }
        var inner = BusReader(items, reading: what)
        return try members(&inner)
    }

    /// A whole message read by `body` (a reply or signal of the bus itself); nil when malformed.
    public static func read<T>(_ values: [Value], _ what: String, _ body: (inout BusReader) throws -> T) -> T? {
        var r = BusReader(values, reading: what)
        return try? body(&r)
    }

    /// A struct value read member by member (an element of an array of structs).
    @inlinable public static func members<T>(
        of value: Value, reading what: String, _ body: (inout BusReader) throws -> T
    ) throws -> T {
        guard let items = value.tupleValue else {
            throw FerryError(.invalidArgument, "\(what) must be a struct, not \(value.typeString)")
        }
        var r = BusReader(items, reading: what)
        return try body(&r)
    }
}
