/// A JSON value of the CLI's output, written as Foundation's JSONSerialization writes it with
/// .prettyPrinted, .sortedKeys and .withoutEscapingSlashes (two-space indents, "key" : value,
/// integral numbers without a fraction): the text scripts saw before, without linking
/// Foundation and ICU into the CLI for it (FoundationEssentials has no JSONSerialization).
/// Keys sort by their lower-case form, then as they are: the same order as Foundation's for the
/// keys printed here (lower-case names and header fields).
enum JSON: Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSON...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSON)...) { self = .object(Dictionary(elements) { $1 }) }
    init(nilLiteral: ()) { self = .null }

    init(_ s: String?) { self = s.map(JSON.string) ?? .null }
    init<I: BinaryInteger>(_ n: I?) { self = n.map { .int(Int64($0)) } ?? .null }
    init(_ b: Bool) { self = .bool(b) }
    init(_ d: Double) { self = .double(d) }
    init(_ fields: [String: String]) { self = .object(fields.mapValues(JSON.string)) }

    /// The pretty-printed text.
    var text: String {
        var out: [UInt8] = []
        write(to: &out, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8], indent: Int) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let n): out += String(n).utf8
        case .double(let d):
            // An integral value prints as an integer (1, not 1.0), as JSONSerialization does.
            if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)).utf8 } else { out += "\(d)".utf8 }
        case .string(let s): TaskJSON.string(s, to: &out)
        case .array(let items):
            container("[", "]", items.count, to: &out, indent: indent) { i, out in
                items[i].write(to: &out, indent: indent + 2)
            }
        case .object(let fields):
            let keys = fields.keys.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
            container("{", "}", keys.count, to: &out, indent: indent) { i, out in
                TaskJSON.string(keys[i], to: &out)
                out += " : ".utf8
                fields[keys[i]]!.write(to: &out, indent: indent + 2)
            }
        }
    }

    /// Open, each element on its own line one level in, close (an empty one has an empty line).
    private func container(
        _ open: Character, _ close: Character, _ count: Int, to out: inout [UInt8], indent: Int,
        element: (Int, inout [UInt8]) -> Void
    ) {
        out += "\(open)\n".utf8
        for i in 0..<count {
            if i > 0 { out += ",\n".utf8 }
            out += [UInt8](repeating: UInt8(ascii: " "), count: indent + 2)
            element(i, &out)
        }
        out += "\n".utf8
        out += [UInt8](repeating: UInt8(ascii: " "), count: indent)
        out += "\(close)".utf8
    }
}
