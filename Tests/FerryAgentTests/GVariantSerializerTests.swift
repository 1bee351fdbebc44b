import CFerryShim
import CGLib
import FerryCore
import Testing
@testable import FerryBus

/// `Value.makeGVariant()` writes containers straight in GVariant's serialised form: every value
/// here must come out byte for byte as GLib's own builders make it, and in normal form.
@Suite struct GVariantSerializerTests {
    @Test func tasksAsTheAPISendsThemAreGLibsBytes() {
        let r = TaskRecord(id: 42, session: "photos", url: "https://example.com/a%20b.jpg", host: "example.com",
                           state: .running, received: 1234, expected: 99_999, file: "/home/u/Downloads/a b.jpg",
                           description: "a photo", created: 1_700_000_000_000, updated: 1_700_000_000_500)
        let info = TaskInfo(r, app: "org.example.App")
        expectSameBytes(.dict(info.dictionary))
        expectSameBytes(.array([info.row, info.row], elementType: TaskInfo.rowType))
        expectSameBytes(.tuple([.uint64(7), .string("completed")]))
        expectSameBytes(.tuple([.array([.tuple([.uint64(1), .int64(2), .int64(-1)])], elementType: "(txx)")]))
    }

    @Test func edgeCasesOfTheFormat() {
        expectSameBytes(.tuple([]))
        expectSameBytes(.array([], elementType: "s"))
        expectSameBytes(.strings([]))
        expectSameBytes(.strings(["", "", ""]))
        expectSameBytes(.dict([:]))
        expectSameBytes(.stringDict(["k": "v", "": ""]))
        expectSameBytes(.tuple([.string("a"), .array([], elementType: "(tx)"), .string("b")]))
        expectSameBytes(.tuple([.bool(true), .int64(1), .bool(false)]))
        expectSameBytes(.tuple([.tuple([.bool(true), .int32(3)]), .string("x"), .tuple([.int64(1), .bool(true)])]))
        expectSameBytes(.array([.array([], elementType: "t"), .array([.uint64(1)], elementType: "t")], elementType: "at"))
        expectSameBytes(.tuple([.bytes([]), .bytes([1, 2, 3]), .handle(0)]))
        expectSameBytes(.dict(["nested": .dict(["n": .double(1.5), "list": .strings(["é", "日本"])])]))
        // A C string ends at its first NUL: so does the serialised one.
        expectSameBytes(.strings(["before\u{0}after"]))
    }

    /// Containers past 255 bytes and past 64 KiB take wider framing offsets.
    @Test func offsetsWidenWithTheContainer() {
        expectSameBytes(.strings((0..<40).map { "string number \($0)" }))
        expectSameBytes(.strings((0..<5000).map { "string number \($0)" }))
        expectSameBytes(.tuple([.string(String(repeating: "x", count: 70_000)), .string("y")]))
        let big = (0..<300).map { i in Value.dict(["id": .uint64(UInt64(i)), "name": .string(String(repeating: "n", count: i))]) }
        expectSameBytes(.array(big, elementType: "a{sv}"))
    }

    @Test func randomValuesAreGLibsBytes() {
        var rng = SplitMix(seed: 20261124)
        for _ in 0..<400 { expectSameBytes(rng.value(depth: 0)) }
    }

    private func expectSameBytes(_ v: Value, sourceLocation: SourceLocation = #_sourceLocation) {
        let ours = g_variant_ref_sink(v.makeGVariant())!
        let theirs = g_variant_ref_sink(reference(v))!
        defer { g_variant_unref(ours); g_variant_unref(theirs) }
        #expect(String(cString: g_variant_get_type_string(ours)) == v.typeString, sourceLocation: sourceLocation)
        #expect(bytes(ours) == bytes(theirs), "\(v.typeString)", sourceLocation: sourceLocation)
        // Read back untrusted: GLib checks the framing itself.
        let copy = bytes(ours)
        let untrusted = copy.withUnsafeBytes { raw in
            v.typeString.withCString { g_variant_ref_sink(g_variant_new_from_data(ferry_variant_type($0), raw.baseAddress, gsize(raw.count), 0, nil, nil))! }
        }
        defer { g_variant_unref(untrusted) }
        #expect(g_variant_is_normal_form(untrusted) != 0, sourceLocation: sourceLocation)
        #expect(Value(untrusted) == Value(theirs), sourceLocation: sourceLocation)
    }

    private func bytes(_ v: OpaquePointer) -> [UInt8] {
        let n = Int(g_variant_get_size(v))
        guard n > 0, let p = g_variant_get_data(v) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// GLib's own way: a tree of GVariants from its builders.
    private func reference(_ v: Value) -> OpaquePointer {
        func builder(_ type: String) -> UnsafeMutablePointer<GVariantBuilder> {
            type.withCString { g_variant_builder_new(ferry_variant_type($0)) }
        }
        func build(_ type: String, _ items: [OpaquePointer]) -> OpaquePointer {
            let b = builder(type)
            defer { g_variant_builder_unref(b) }
            for item in items { g_variant_builder_add_value(b, item) }
            return g_variant_builder_end(b)
        }
        switch v {
        case .bytes(let b):
            return "y".withCString { y in b.withUnsafeBytes { g_variant_new_fixed_array(ferry_variant_type(y), $0.baseAddress, gsize(b.count), 1) } }
        case .strings(let list):
            return build("as", list.map { g_variant_new_string($0) })
        case .dict(let d):
            return build("a{sv}", d.keys.sorted().map { g_variant_new_dict_entry(g_variant_new_string($0), g_variant_new_variant(reference(d[$0]!))) })
        case .stringDict(let d):
            return build("a{ss}", d.keys.sorted().map { g_variant_new_dict_entry(g_variant_new_string($0), g_variant_new_string(d[$0]!)) })
        case .array(let items, let t):
            return build("a" + t, items.map(reference))
        case .tuple(let items):
            var children: [OpaquePointer?] = items.map(reference)
            return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize(items.count)) }
        default:
            return v.makeGVariant()
        }
    }
}

/// A small seeded generator of Values of every shape the API can send.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    mutating func string() -> String {
        let pieces = ["", "a", "ferry", "é", "日本語", "/home/u/Downloads", "x y z", String(repeating: "long", count: 40)]
        return (0..<below(3)).map { _ in pieces[below(pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> Value {
        let kinds = depth > 3 ? 9 : 15
        switch below(kinds) {
        case 0: return .string(string())
        case 1: return .bool(below(2) == 1)
        case 2: return .int32(Int32(truncatingIfNeeded: next()))
        case 3: return .uint32(UInt32(truncatingIfNeeded: next()))
        case 4: return .int64(Int64(bitPattern: next()))
        case 5: return .uint64(next())
        case 6: return .double(Double(below(1_000_000)) / 7)
        case 7: return .handle(Int32(below(4)))
        case 8: return .bytes((0..<below(40)).map { _ in UInt8(truncatingIfNeeded: next()) })
        case 9: return .strings((0..<below(6)).map { _ in string() })
        case 10: return .stringDict(Dictionary((0..<below(5)).map { _ in (string(), string()) }, uniquingKeysWith: { a, _ in a }))
        case 11:
            return .dict(Dictionary((0..<below(5)).map { _ in (string(), value(depth: depth + 1)) }, uniquingKeysWith: { a, _ in a }))
        case 12, 13:
            return .tuple((0..<below(5)).map { _ in value(depth: depth + 1) })
        default:
            let template = value(depth: depth + 1)
            return .array((0..<below(6)).map { _ in similar(to: template) }, elementType: template.typeString)
        }
    }

    /// Another random value of the template's type.
    mutating func similar(to template: Value) -> Value {
        switch template {
        case .tuple(let items): return .tuple(items.map { similar(to: $0) })
        case .array(let items, let t):
            guard let first = items.first else { return template }
            return .array((0..<below(4)).map { _ in similar(to: first) }, elementType: t)
        case .string: return .string(string())
        case .bytes: return .bytes((0..<below(20)).map { _ in UInt8(truncatingIfNeeded: next()) })
        case .strings: return .strings((0..<below(4)).map { _ in string() })
        case .int64: return .int64(Int64(bitPattern: next()))
        case .uint64: return .uint64(next())
        default: return template
        }
    }
}
