import FerryBus
import Foundation
import Testing

/// `Setting` spells each key of the GSettings schema once: the same keys, the same ranges, so
/// the agent's reads, the Preferences controls and ferryd's flags cannot drift from the schema.
@Suite struct SettingTests {
    /// Each <key> of desktop/dev.ferry.Agent.gschema.xml: its name and its range, if it has one.
    static func schemaKeys() throws -> [String: ClosedRange<Int64>?] {
        let xml = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.Agent.gschema.xml", encoding: .utf8)
        var keys: [String: ClosedRange<Int64>?] = [:]
        for block in xml.components(separatedBy: "<key ").dropFirst() {
            let body = block.components(separatedBy: "</key>")[0]
            let name = try #require(body.firstMatch(of: try Regex(#"name="([^"]+)""#, as: (Substring, Substring).self))?.1)
            let bounds = try Regex(#"<range min="(-?\d+)" max="(-?\d+)"/>"#, as: (Substring, Substring, Substring).self)
            keys.updateValue(body.firstMatch(of: bounds).map { Int64($0.1)!...Int64($0.2)! }, forKey: String(name))
        }
        return keys
    }

    @Test func theKeysAreTheSchemasWithItsRanges() throws {
        let schema = try Self.schemaKeys()
        #expect(schema.count >= 9)
        #expect(Set(Setting.allCases.map(\.rawValue)) == Set(schema.keys))
        for s in Setting.allCases {
            #expect(schema[s.rawValue] ?? nil == s.range, "\(s.rawValue)")
        }
    }
}
