/// The keys of one a{sv} the API carries, as the XML's `dev.ferry.Swift.Keys` annotation lists
/// them on an argument of that Swift type: `name:signature`, `?` after one that may be absent
/// (`identifier:s latest-seq:t max-rate:x?`). Generated as the type's `Key` enum.
struct DictionaryKeys {
    struct Key {
        let name: String
        let signature: String
        let required: Bool
        /// latest-seq -> latestSeq
        var caseName: String {
            let parts = name.split(separator: "-").map(String.init)
            return parts.enumerated().map { i, p in i == 0 ? p : p.prefix(1).uppercased() + p.dropFirst() }.joined()
        }
    }
    static let annotation = "dev.ferry.Swift.Keys"
    let type: String
    let keys: [Key]

    init(type: String, list: String, where member: String) throws {
        self.type = type
        keys = try list.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { item in
            let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw GeneratorError("\(member): key \"\(item)\" of \(type) is not name:signature")
            }
            let optional = parts[1].hasSuffix("?")
            return Key(
                name: parts[0], signature: optional ? String(parts[1].dropLast()) : parts[1], required: !optional)
        }
        guard Set(keys.map(\.name)).count == keys.count else {
            throw GeneratorError("\(member): \(type) lists a key twice")
        }
    }

    /// The type's element: `[TaskInfo]` carries TaskInfo's keys.
    static func dictionaryType(of swiftType: String) -> String {
        swiftType.hasPrefix("[") && swiftType.hasSuffix("]") ? String(swiftType.dropFirst().dropLast()) : swiftType
    }

    func source() -> String {
        let cases = keys.map {
            $0.caseName == $0.name ? "        case \($0.name)\n" : "        case \($0.caseName) = \"\($0.name)\"\n"
        }.joined()
        let signatures = keys.map { "            case .\($0.caseName): \"\($0.signature)\"\n" }.joined()
        let required = keys.filter(\.required).map { ".\($0.caseName)" }
        let requiredCases = required.joined(separator: ", ")
        let requiredBody =
            required.isEmpty
            ? "false"
            : required.count == keys.count ? "true" : "switch self { case \(requiredCases): true; default: false }"
        return """
            extension \(type) {
                /// The keys of its a{sv}, each with its D-Bus type (desktop/dev.ferry.Agent1.xml).
                public enum Key: String, CaseIterable, Sendable, BusKey {
            \(cases)
                    public var signature: String {
                        switch self {
            \(signatures)            }
                    }
                    /// Always sent by the agent (the others may be absent).
                    public var required: Bool {
                        \(requiredBody)
                    }
                }
            }


            """
    }
}
