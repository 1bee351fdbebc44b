/// The data keys of each event kind FetchEvents carries, as the XML's `dev.ferry.Event.<kind>`
/// annotations list them (`received:x expected:x`). Generated as `EventKind` and, per kind, a
/// namespace with its `Key` enum (`ProgressEvent.Key.received`), read and written by
/// SessionEvent+Bus.swift.
struct EventKeys {
    static let prefix = "dev.ferry.Event."
    let kinds: [(kind: String, keys: DictionaryKeys)]

    init(_ interface: Interface) throws {
        var found: [String: DictionaryKeys] = [:]
        for m in interface.methods + interface.signals {
            for a in m.inputs + m.outputs {
                for (name, list) in a.annotations where name.hasPrefix(Self.prefix) {
                    let kind = String(name.dropFirst(Self.prefix.count))
                    guard !kind.isEmpty, kind.allSatisfy({ $0.isLetter || $0 == "-" }) else {
                        throw GeneratorError("\(m.name): \"\(name)\" does not name an event kind")
                    }
                    guard found[kind] == nil else { throw GeneratorError("\(m.name): event kind \(kind) listed twice") }
                    found[kind] = try DictionaryKeys(type: Self.typeName(kind), list: list, where: m.name)
                }
            }
        }
        kinds = found.keys.sorted().map { ($0, found[$0]!) }
    }

    /// progress -> ProgressEvent
    static func typeName(_ kind: String) -> String {
        kind.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() + "Event"
    }

    func source() -> String {
        guard !kinds.isEmpty else { return "" }
        let cases = kinds.map {
            "    case \(DictionaryKeys.Key(name: $0.kind, signature: "", required: true).caseName)"
        }
        var out = """
            /// The kinds of event FetchEvents carries (desktop/dev.ferry.Agent1.xml, dev.ferry.Event.*).
            public enum EventKind: String, CaseIterable, Sendable {
            \(cases.joined(separator: "\n"))
            }


            """
        for (kind, keys) in kinds {
            out += "/// A `\(kind)` event's data keys.\npublic enum \(Self.typeName(kind)) {}\n\n"
            out += keys.source()
        }
        return out
    }
}
