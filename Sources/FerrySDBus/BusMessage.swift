import CSystemd
import FerryBus
import Glibc

/// One sd-bus message, its header read and its arguments read into or written from `Value`s.
/// sd-bus writes arguments straight in D-Bus's wire format (GDBus builds a GVariant tree and
/// converts it child by child when it sends or receives), which is why the agent speaks sd-bus.
/// Not owning: whoever made or received the message keeps its reference.
public struct BusMessage {
    public let pointer: OpaquePointer

    public init(pointer: OpaquePointer) { self.pointer = pointer }

    public enum Kind { case methodCall, methodReturn, error, signal, other }

    public var kind: Kind {
        var type: UInt8 = 0
        sd_bus_message_get_type(pointer, &type)
        switch Int32(type) {
        case Int32(SD_BUS_MESSAGE_METHOD_CALL): return .methodCall
        case Int32(SD_BUS_MESSAGE_METHOD_RETURN): return .methodReturn
        case Int32(SD_BUS_MESSAGE_METHOD_ERROR): return .error
        case Int32(SD_BUS_MESSAGE_SIGNAL): return .signal
        default: return .other
        }
    }

    private static func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
    public var sender: String? { Self.text(sd_bus_message_get_sender(pointer)) }
    public var path: String? { Self.text(sd_bus_message_get_path(pointer)) }
    public var interface: String? { Self.text(sd_bus_message_get_interface(pointer)) }
    public var member: String? { Self.text(sd_bus_message_get_member(pointer)) }
    /// The arguments' types, as in the interface XML ("" for none).
    public var signature: String { Self.text(sd_bus_message_get_signature(pointer, 1)) ?? "" }

    /// An error reply's name and text.
    public var error: (name: String, message: String)? {
        guard let e = sd_bus_message_get_error(pointer), let name = e.pointee.name else { return nil }
        return (String(cString: name), Self.text(e.pointee.message) ?? "")
    }

    // MARK: - Reading

    /// The arguments, from the first. Variants are unwrapped; a handle ('h') is the descriptor
    /// itself, owned by the message (dup it to keep it).
    public func values() -> [Value] {
        sd_bus_message_rewind(pointer, 1)
        var out: [Value] = []
        while let v = next() { out.append(v) }
        return out
    }

    private func read<T>(_ type: CChar, _ initial: T) -> T? {
        var v = initial
        return sd_bus_message_read_basic(pointer, type, &v) > 0 ? v : nil
    }

    /// The next argument of the current container (nil at its end).
    private func next() -> Value? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(pointer, &type, &contents) > 0 else { return nil }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            return read(type, UnsafePointer<CChar>?.none).flatMap { $0 }.map { .string(String(cString: $0)) }
        case UInt8(ascii: "b"): return read(type, Int32(0)).map { .bool($0 != 0) }
        case UInt8(ascii: "y"): return read(type, UInt8(0)).map { .uint32(UInt32($0)) }
        case UInt8(ascii: "n"): return read(type, Int16(0)).map { .int32(Int32($0)) }
        case UInt8(ascii: "q"): return read(type, UInt16(0)).map { .uint32(UInt32($0)) }
        case UInt8(ascii: "i"): return read(type, Int32(0)).map { .int32($0) }
        case UInt8(ascii: "u"): return read(type, UInt32(0)).map { .uint32($0) }
        case UInt8(ascii: "x"): return read(type, Int64(0)).map { .int64($0) }
        case UInt8(ascii: "t"): return read(type, UInt64(0)).map { .uint64($0) }
        case UInt8(ascii: "d"): return read(type, Double(0)).map { .double($0) }
        case UInt8(ascii: "h"): return read(type, Int32(-1)).map { .handle($0) }
        case UInt8(ascii: "a"):
            let element = Self.text(contents) ?? ""
            if element == "y" {
                var bytes: UnsafeRawPointer?
                var size = 0
                guard sd_bus_message_read_array(pointer, CChar(UInt8(ascii: "y")), &bytes, &size) >= 0 else {
                    return nil
                }
                return .bytes(size == 0 || bytes == nil ? [] : Array(UnsafeRawBufferPointer(start: bytes, count: size)))
            }
            guard let items = children(type, contents) else { return nil }
            if element == "s" { return .strings(items.compactMap(\.stringValue)) }
            if element.hasPrefix("{s") {
                var d: [String: Value] = [:]
                for case .tuple(let kv) in items where kv.count == 2 { if let k = kv[0].stringValue { d[k] = kv[1] } }
                return element == "{ss}" ? .stringDict(d.compactMapValues(\.stringValue)) : .dict(d)
            }
            return .array(items, elementType: element)
        case UInt8(ascii: "v"):
            guard sd_bus_message_enter_container(pointer, type, contents) > 0 else { return nil }
            defer { sd_bus_message_exit_container(pointer) }
            return next()
        case UInt8(ascii: "r"), UInt8(ascii: "e"):
            return children(type, contents).map { .tuple($0) }
        default:
            return nil
        }
    }

    private func children(_ type: CChar, _ contents: UnsafePointer<CChar>?) -> [Value]? {
        guard sd_bus_message_enter_container(pointer, type, contents) > 0 else { return nil }
        var items: [Value] = []
        while let v = next() { items.append(v) }
        sd_bus_message_exit_container(pointer)
        return items
    }

    // MARK: - Writing

    /// Appends `values` as the message's arguments; false when sd-bus refused one (the message
    /// is then not to be sent).
    @discardableResult
    public func append(_ values: [Value]) -> Bool {
        var ok = true
        for v in values { ok = append(v) && ok }
        return ok
    }

    /// Appends `value` wrapped in a variant.
    public func append(variant value: Value) -> Bool {
        if let type = Self.basicType(value) {  // a literal: no type string built and converted per value
            return sd_bus_message_open_container(pointer, Self.v, type) >= 0 && append(value) && close()
        }
        return open(Self.v, value.typeString) && append(value) && close()
    }

    /// The C type string of a basic value; nil for containers.
    private static func basicType(_ value: Value) -> UnsafePointer<CChar>? {
        let type: StaticString
        switch value {
        case .string: type = "s"
        case .bool: type = "b"
        case .int32: type = "i"
        case .uint32: type = "u"
        case .int64: type = "x"
        case .uint64: type = "t"
        case .double: type = "d"
        case .handle: type = "h"
        default: return nil
        }
        return UnsafeRawPointer(type.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// One `{sv}` entry.
    private func entry(_ key: String, _ value: Value) -> Bool {
        sd_bus_message_open_container(pointer, Self.e, Self.sv) >= 0 && string(key) && append(variant: value) && close()
    }

    private static let a = CChar(UInt8(ascii: "a")), e = CChar(UInt8(ascii: "e")), v = CChar(UInt8(ascii: "v")),
        r = CChar(UInt8(ascii: "r"))
    private static let sv = UnsafeRawPointer(("sv" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
    private static let dictOfVariants = UnsafeRawPointer(("{sv}" as StaticString).utf8Start).assumingMemoryBound(
        to: CChar.self)

    private func basic<T>(_ type: Character, _ value: T) -> Bool {
        var value = value
        return sd_bus_message_append_basic(pointer, CChar(type.asciiValue!), &value) >= 0
    }

    private func open(_ type: CChar, _ contents: String) -> Bool {
        sd_bus_message_open_container(pointer, type, contents) >= 0
    }
    private func close() -> Bool { sd_bus_message_close_container(pointer) >= 0 }

    private func string(_ s: String) -> Bool {
        s.withCString { sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "s")), $0) >= 0 }
    }

    private func append(_ value: Value) -> Bool {
        switch value {
        case .string(let s): return string(s)
        case .bool(let b): return basic("b", Int32(b ? 1 : 0))
        case .int32(let x): return basic("i", x)
        case .uint32(let x): return basic("u", x)
        case .int64(let x): return basic("x", x)
        case .uint64(let x): return basic("t", x)
        case .double(let x): return basic("d", x)
        case .handle(let fd): return basic("h", fd)
        case .bytes(let b):
            return b.withUnsafeBytes {
                sd_bus_message_append_array(pointer, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) >= 0
            }
        case .strings(let list):
            guard open(Self.a, "s") else { return false }
            for s in list where !string(s) { return false }
            return close()
        case .dict(let d):
            guard sd_bus_message_open_container(pointer, Self.a, Self.dictOfVariants) >= 0 else { return false }
            // in key order, as GLib's builders and GDBus clients print them
            for (key, item) in d.sorted(by: { $0.key < $1.key }) where !entry(key, item) {
                return false
            }
            return close()
        case .fields(let f):
            guard sd_bus_message_open_container(pointer, Self.a, Self.dictOfVariants) >= 0 else { return false }
            for field in f where !entry(field.key, field.value) { return false }
            return close()
        case .stringDict(let d):
            guard open(Self.a, "{ss}") else { return false }
            for key in d.keys.sorted() {
                guard open(Self.e, "ss"), string(key), string(d[key]!), close() else { return false }
            }
            return close()
        case .array(let items, let element):
            guard open(Self.a, element) else { return false }
            // Structs of the array take their members' types from the element type, once.
            let members = element.first == "(" ? String(element.dropFirst().dropLast()) : nil
            for item in items {
                if let members, case .tuple(let fields) = item {
                    guard append(tuple: fields, members: members) else { return false }
                } else if !append(item) {
                    return false
                }
            }
            return close()
        case .tuple(let items):
            return append(tuple: items, members: items.map(\.typeString).joined())
        }
    }

    private func append(tuple items: [Value], members: String) -> Bool {
        guard open(Self.r, members) else { return false }
        for item in items where !append(item) { return false }
        return close()
    }
}
