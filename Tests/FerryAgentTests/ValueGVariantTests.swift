import CFerryShim
import CGLib
import FerryCore
import Testing
@testable import FerryBus

/// `Value.makeGVariant()` (what clients send) against GLib itself: the values the API sends
/// and random values of every shape come out of the type their `typeString` says, in normal
/// form, equal to what GLib parses from their text, and read back as the same value.
@Suite struct ValueGVariantTests {
    @Test func whatTheAPISendsIsWhatGLibParses() {
        expectParsed(.dict(["paused": .bool(true), "headers": .stringDict(["X-A": "1"]), "method": .string("POST")]),
                     "{'headers': <{'X-A': '1'}>, 'method': <'POST'>, 'paused': <true>}")
        expectParsed(.tuple([.string("s"), .array([.tuple([.string("u"), .dict([:])])], elementType: "(sa{sv})")]),
                     "('s', [('u', @a{sv} {})])")
        expectParsed(.tuple([.bytes([1, 2, 3]), .strings(["a", "日本"]), .uint64(7), .int64(-1)]),
                     "(@ay [1, 2, 3], ['a', '日本'], @t 7, @x -1)")
        expectParsed(.array([], elementType: "(txx)"), "@a(txx) []")
    }

    /// A task's info is written as ordered fields (no hashing, no sort): exactly the dictionary
    /// GLib would build, keys in order and each once.
    @Test func aTaskInfosFieldsAreItsDictionaryInKeyOrder() {
        var r = TaskRecord(session: "s", url: "http://a/x", host: "a")
        r.id = 7; r.retryAt = 5; r.uploadFile = "/f"; r.kind = .upload
        for info in [TaskInfo(r, app: "org.example.App"), TaskInfo(TaskRecord(session: "s", url: "http://a/y", host: "a"), app: "")] {
            let keys = info.fields.map(\.key)
            #expect(keys == keys.sorted() && Set(keys).count == keys.count, "\(keys)")
            let ordered = g_variant_ref_sink(Value.fields(info.fields).makeGVariant())!, hashed = g_variant_ref_sink(Value.dict(info.dictionary).makeGVariant())!
            defer { g_variant_unref(ordered); g_variant_unref(hashed) }
            #expect(g_variant_equal(UnsafeRawPointer(ordered), UnsafeRawPointer(hashed)) != 0)
        }
    }

    @Test func randomValuesRoundTrip() {
        var random = SplitMix(seed: 24)
        for _ in 0..<500 {
            let v = random.value(depth: 0)
            let g = g_variant_ref_sink(v.makeGVariant())!
            defer { g_variant_unref(g) }
            #expect(String(cString: g_variant_get_type_string(g)) == v.typeString)
            #expect(g_variant_is_normal_form(g) != 0)
            let again = g_variant_ref_sink(Value(g).makeGVariant())!
            defer { g_variant_unref(again) }
            #expect(g_variant_equal(UnsafeRawPointer(g), UnsafeRawPointer(again)) != 0, "\(v)")
        }
    }

    private func expectParsed(_ v: Value, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let made = g_variant_ref_sink(v.makeGVariant())!
        defer { g_variant_unref(made) }
        guard let parsed = g_variant_parse(nil, text, nil, nil, nil) else {
            Issue.record("GLib cannot parse \(text)", sourceLocation: sourceLocation)
            return
        }
        defer { g_variant_unref(parsed) }
        #expect(g_variant_equal(UnsafeRawPointer(made), UnsafeRawPointer(parsed)) != 0,
                "\(String(cString: g_variant_print(made, 1))) ≠ \(text)", sourceLocation: sourceLocation)
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
