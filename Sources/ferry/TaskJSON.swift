import FerryBus

/// A task as the JSON text `ferry list --json` prints, written directly: the keys are fixed and
/// already in sorted order, so the text is exactly what JSONSerialization (.prettyPrinted,
/// .sortedKeys, .withoutEscapingSlashes) gives for `Output.json(task)`, at a fraction of the
/// cost (it sorts the keys of every object with ICU collation: 35 s of 56 s for 100,000 tasks).
enum TaskJSON {
    /// The object, its lines indented by `indent` spaces more than JSONSerialization's.
    static func text(_ t: TaskInfo, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        let fields: [(String, String)] = [
            ("attempts", String(t.attempts)),
            ("created", String(t.created / 1_000_000)),
            ("description", string(t.description)),
            ("error", t.error.map(string) ?? "null"),
            ("expected", t.expected.map { String($0) } ?? "null"),
            ("file", t.file.map(string) ?? "null"),
            ("id", String(t.id)),
            ("kind", string(t.kind.rawValue)),
            ("method", string(t.method)),
            ("reason", t.reason.map { string($0.rawValue) } ?? "null"),
            ("received", String(t.received)),
            ("session", string(t.session)),
            ("state", string(t.state.rawValue)),
            ("updated", String(t.updated / 1_000_000)),
            ("url", string(t.url)),
        ]
        return pad + "{\n" + fields.map { pad + "  \"\($0.0)\" : \($0.1)" }.joined(separator: ",\n") + "\n" + pad + "}"
    }

    /// A JSON string literal, escaped as JSONSerialization escapes (slashes left alone).
    static func string(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
