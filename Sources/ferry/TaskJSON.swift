import FerryBus

/// A task as the JSON text `ferry list --json` prints, written directly as UTF-8 bytes: the keys
/// are fixed and already in sorted order, so the text is exactly what JSONSerialization
/// (.prettyPrinted, .sortedKeys, .withoutEscapingSlashes) gives for `Output.json(task)`, at a
/// fraction of the cost (it sorts the keys of every object with ICU collation: 35 s of 56 s for
/// 100,000 tasks; building Swift Strings piece by piece was most of the rest).
enum TaskJSON {
    /// Appends the object, its lines indented by `indent` spaces more than JSONSerialization's.
    static func write(_ t: TaskInfo, indent: Int, to out: inout [UInt8]) {
        let pad = [UInt8](repeating: UInt8(ascii: " "), count: indent)
        var first = true
        func key(_ name: StaticString) {
            if !first { out.append(contentsOf: ",\n".utf8) }
            first = false
            out += pad
            out.append(contentsOf: "  \"".utf8)
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\" : ".utf8)
        }
        func number(_ name: StaticString, _ v: Int64?) {
            key(name); out.append(contentsOf: (v.map { String($0) } ?? "null").utf8)
        }
        func text(_ name: StaticString, _ v: String?) {
            key(name)
            if let v { string(v, to: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        out += pad
        out.append(contentsOf: "{\n".utf8)
        text("app", t.app)
        number("attempts", Int64(t.attempts))
        number("created", t.created / 1_000_000)
        text("description", t.description)
        text("error", t.error)
        number("expected", t.expected)
        text("file", t.file)
        number("id", t.id)
        text("kind", t.kind.rawValue)
        text("method", t.method)
        text("reason", t.reason?.rawValue)
        number("received", t.received)
        text("session", t.session)
        text("state", t.state.rawValue)
        number("updated", t.updated / 1_000_000)
        text("url", t.url)
        out.append(contentsOf: "\n".utf8)
        out += pad
        out.append(UInt8(ascii: "}"))
    }

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
