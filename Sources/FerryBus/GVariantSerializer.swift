import CGLib
import CFerryShim

/// Writes a `Value` straight into GVariant's serialised form (GLib's "GVariant Serialisation"
/// format, host byte order), so a reply of a hundred tasks is one buffer instead of thousands of
/// GVariant nodes built, ref-counted and walked again by GDBus. Containers align their members
/// to the member's alignment and record where variable-sized members end in framing offsets
/// whose width depends on the container's size; a member's alignment never exceeds its
/// container's, and the buffer starts 8-aligned, so aligning to the buffer's start is aligning
/// to the container's. `Value.makeGVariant()` checks it byte for byte against GLib's own
/// builders in the tests.
struct GVariantSerializer {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// A floating GVariant of `type` holding `value`'s serialised bytes.
    static func variant(_ value: Value, type: String) -> OpaquePointer {
        var s = GVariantSerializer(capacity: 256)
        s.write(value)
        let data = s.bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        return type.withCString { g_variant_new_from_bytes(ferry_variant_type($0), data, 1) }
    }

    // MARK: - Layout

    /// Alignment and fixed size (nil: variable-sized) of a value, read from the value itself
    /// so that no type string is built per element.
    static func layout(_ v: Value) -> (alignment: Int, fixedSize: Int?) {
        switch v {
        case .bool: return (1, 1)
        case .int32, .uint32, .handle: return (4, 4)
        case .int64, .uint64, .double: return (8, 8)
        case .string, .bytes, .strings, .stringDict: return (1, nil)
        case .dict: return (8, nil)
        case .array(_, let element): return (layout(type: Substring(element)).alignment, nil)
        case .tuple(let items): return tupleLayout(items.lazy.map(layout))
        }
    }

    /// Alignment and fixed size of a GVariant type string (for the elements of an array).
    static func layout(type: Substring) -> (alignment: Int, fixedSize: Int?) {
        var rest = type
        return parse(&rest)
    }

    private static func parse(_ s: inout Substring) -> (alignment: Int, fixedSize: Int?) {
        guard let c = s.popFirst() else { return (1, nil) }
        switch c {
        case "b", "y": return (1, 1)
        case "n", "q": return (2, 2)
        case "i", "u", "h": return (4, 4)
        case "x", "t", "d": return (8, 8)
        case "s", "o", "g": return (1, nil)
        case "v": return (8, nil)
        case "a", "m": return (parse(&s).alignment, nil)
        case "(", "{":
            var members: [(alignment: Int, fixedSize: Int?)] = []
            while let next = s.first, next != ")", next != "}" { members.append(parse(&s)) }
            _ = s.popFirst()
            return tupleLayout(members)
        default: return (1, nil)
        }
    }

    /// A tuple is fixed-sized when all its members are; its size is then padded to its alignment,
    /// and the unit tuple takes one byte.
    private static func tupleLayout<S: Sequence>(_ members: S) -> (alignment: Int, fixedSize: Int?)
    where S.Element == (alignment: Int, fixedSize: Int?) {
        var alignment = 1
        var size: Int? = 0
        for m in members {
            alignment = max(alignment, m.alignment)
            if let fixed = m.fixedSize, let s = size { size = align(s, m.alignment) + fixed } else { size = nil }
        }
        guard let s = size else { return (alignment, nil) }
        return (alignment, s == 0 ? 1 : align(s, alignment))
    }

    private static func align(_ n: Int, _ alignment: Int) -> Int { (n + alignment - 1) & ~(alignment - 1) }

    // MARK: - Writing

    private mutating func pad(to alignment: Int) {
        while bytes.count & (alignment - 1) != 0 { bytes.append(0) }
    }

    private mutating func append<T: FixedWidthInteger>(_ v: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A string up to its first NUL (what a C string would carry), then the NUL.
    private mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            if let nul = utf8.firstIndex(of: 0) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<nul]))
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
        bytes.append(0)
    }

    mutating func write(_ v: Value) {
        switch v {
        case .string(let s): appendString(s)
        case .bool(let b): bytes.append(b ? 1 : 0)
        case .int32(let x): append(x)
        case .uint32(let x): append(x)
        case .handle(let x): append(x)
        case .int64(let x): append(x)
        case .uint64(let x): append(x)
        case .double(let x): append(x.bitPattern)
        case .bytes(let b): bytes.append(contentsOf: b)
        case .strings(let list):
            writeArray(count: list.count, alignment: 1, fixed: false) { s, i in s.appendString(list[i]) }
        case .stringDict(let d):
            let keys = d.keys.sorted()
            writeArray(count: keys.count, alignment: 1, fixed: false) { s, i in
                s.writeEntry(alignment: 1, key: keys[i]) { $0.appendString(d[keys[i]]!) }
            }
        case .dict(let d):
            let keys = d.keys.sorted()
            writeArray(count: keys.count, alignment: 8, fixed: false) { s, i in
                s.writeEntry(alignment: 8, key: keys[i]) { $0.writeVariant(d[keys[i]]!) }
            }
        case .array(let items, let element):
            let l = Self.layout(type: Substring(element))
            writeArray(count: items.count, alignment: l.alignment, fixed: l.fixedSize != nil) { s, i in s.write(items[i]) }
        case .tuple(let items):
            writeTuple(items)
        }
    }

    /// v: the value at the variant's start, a NUL, then the value's type string.
    private mutating func writeVariant(_ v: Value) {
        pad(to: 8)
        write(v)
        bytes.append(0)
        bytes.append(contentsOf: v.typeString.utf8)
    }

    /// {sX}: the key, its end as a framing offset at the entry's end (the value is last).
    private mutating func writeEntry(alignment: Int, key: String, value: (inout GVariantSerializer) -> Void) {
        pad(to: alignment)
        let start = bytes.count
        appendString(key)
        let keyEnd = bytes.count - start
        pad(to: alignment)
        value(&self)
        appendOffsets([keyEnd], start: start)
    }

    /// Fixed-size elements are packed; variable-sized ones are each aligned and their ends
    /// follow, in order, as framing offsets.
    private mutating func writeArray(count: Int, alignment: Int, fixed: Bool, element: (inout GVariantSerializer, Int) -> Void) {
        guard count > 0 else { return }
        pad(to: alignment)
        let start = bytes.count
        if fixed {
            for i in 0..<count { element(&self, i) }
            return
        }
        var ends: [Int] = []
        ends.reserveCapacity(count)
        for i in 0..<count {
            pad(to: alignment)
            element(&self, i)
            ends.append(bytes.count - start)
        }
        appendOffsets(ends, start: start)
    }

    /// Members aligned in order; the end of each variable-sized member but the last is a framing
    /// offset, stored from the tuple's end backwards. A fixed-size tuple is padded to its size.
    private mutating func writeTuple(_ items: [Value]) {
        let layout = Self.layout(.tuple(items))
        pad(to: layout.alignment)
        let start = bytes.count
        var ends: [Int] = []
        for (i, item) in items.enumerated() {
            let l = Self.layout(item)
            pad(to: l.alignment)
            write(item)
            if l.fixedSize == nil && i != items.count - 1 { ends.append(bytes.count - start) }
        }
        if let size = layout.fixedSize {
            while bytes.count - start < size { bytes.append(0) }
            return
        }
        appendOffsets(ends.reversed(), start: start)
    }

    /// The offsets' width is the smallest that addresses the container with them included.
    private mutating func appendOffsets<C: Collection>(_ offsets: C, start: Int) where C.Element == Int {
        guard !offsets.isEmpty else { return }
        let body = bytes.count - start
        let n = offsets.count
        let width = body + n <= 0xff ? 1 : body + 2 * n <= 0xffff ? 2 : body + 4 * n <= 0xffff_ffff ? 4 : 8
        for o in offsets {
            var x = UInt64(o).littleEndian
            withUnsafeBytes(of: &x) { bytes.append(contentsOf: $0.prefix(width)) }
        }
    }
}
