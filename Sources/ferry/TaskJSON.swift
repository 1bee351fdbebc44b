import FerryBus
import FerryCore

/// A task as the JSON text `ferry list --json` prints, written directly as UTF-8 bytes: the keys
/// are fixed and already in sorted order, so the text is exactly what JSONSerialization
/// (.prettyPrinted, .sortedKeys, .withoutEscapingSlashes) gives for `Output.json(task)`, at a
/// fraction of the cost (it sorts the keys of every object with ICU collation: 35 s of 56 s for
/// 100,000 tasks; building Swift Strings piece by piece was most of the rest).
enum TaskJSON {
    /// Appends the object (`TaskField.listed`), its lines indented by `indent` spaces more than
    /// JSONSerialization's.
    static func write(_ t: TaskInfo, indent: Int, to out: inout [UInt8]) {
        let pad = [UInt8](repeating: UInt8(ascii: " "), count: indent)
        out += pad
        out.append(contentsOf: "{\n".utf8)
        let timing = Timing.of(t)
        withUnsafePointer(to: t) { info in
            var first = true
            for key in keys {
                // start-at, next-attempt: only when the task has one (most have neither).
                var seconds: Int64?
                if key.field == nil {
                    guard let (name, at) = timing, name == key.name else { continue }
                    seconds = at / 1_000_000
                }
                if !first { out.append(contentsOf: ",\n".utf8) }
                first = false
                out += pad
                out += key.head  // `  "name" : `
                guard let i = key.field else {
                    out.append(contentsOf: String(seconds!).utf8)
                    continue
                }
                switch places[i].read(info) {
                case .null: out.append(contentsOf: "null".utf8)
                case .int(let n): out.append(contentsOf: String(inSeconds[i] ? n / 1_000_000 : n).utf8)
                case .text(let s): string(s, to: &out)
                default: out.append(contentsOf: Output.jsonValue(TaskField.listed[i], t).text.utf8)  // none now
                }
            }
        }
        out.append(contentsOf: "\n".utf8)
        out += pad
        out.append(UInt8(ascii: "}"))
    }

    /// The listed fields in arrays the loop reads without copying a `TaskField`.
    private static let places = TaskField.listed.map(\.inInfo)
    private static let names = TaskField.listed.map(\.name)
    private static let inSeconds = TaskField.listed.map(\.jsonInSeconds)
    /// Every key in sorted order, as JSONSerialization writes them: the fields' (by index) and
    /// the times `Timing` adds.
    private static let keys: [(name: String, head: [UInt8], field: Int?)] =
        (names.enumerated().map { ($0.element, Optional($0.offset)) } + Timing.keys.map { ($0, nil) })
        .sorted { $0.0 < $1.0 }.map { ($0.0, Array("  \"\($0.0)\" : ".utf8), $0.1) }

    /// A JSON string literal, escaped as JSONSerialization escapes (slashes and non-ASCII left
    /// alone: every byte of a multi-byte UTF-8 sequence is ≥ 0x80 and copied as it is).
    static func string(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            case 0..<0x20:
                let hex = String(b, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
