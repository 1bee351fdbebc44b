import FerryCore

/// Reading one option of an a{sv}: a wrong type is an InvalidArgument naming the option.
enum OptionValue {
    static func string(_ d: [String: Value], _ key: String) throws -> String? { try d[key].map { try string($0, key) } }
    static func bool(_ d: [String: Value], _ key: String) throws -> Bool? { try d[key].map { try bool($0, key) } }
    static func count(_ d: [String: Value], _ key: String) throws -> Int? { try d[key].map { try count($0, key) } }
    static func strings(_ d: [String: Value], _ key: String) throws -> [String]? {
        try d[key].map { try strings($0, key) }
    }
    static func stringDict(_ d: [String: Value], _ key: String) throws -> [String: String]? {
        try d[key].map { try stringDict($0, key) }
    }

    static func string(_ v: Value, _ key: String) throws -> String {
        guard let s = v.stringValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a string") }
        return s
    }
    static func bool(_ v: Value, _ key: String) throws -> Bool {
        guard let b = v.boolValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a boolean") }
        return b
    }
    /// Any integer type: clients' bindings do not all send u.
    static func count(_ v: Value, _ key: String) throws -> Int {
        guard let i = v.int64Value, i >= 0 else {
            throw FerryError(.invalidArgument, "option '\(key)' must be a non-negative integer")
        }
        return Int(i)
    }
    static func strings(_ v: Value, _ key: String) throws -> [String] {
        guard case .strings(let s) = v else {
            throw FerryError(.invalidArgument, "option '\(key)' must be an array of strings")
        }
        return s
    }
    static func stringDict(_ v: Value, _ key: String) throws -> [String: String] {
        guard case .stringDict(let s) = v else { throw FerryError(.invalidArgument, "\(key) must be a{ss}") }
        return s
    }
    static func double(_ v: Value, _ key: String) throws -> Double {
        guard case .double(let d) = v else { throw FerryError(.invalidArgument, "option '\(key)' must be a double") }
        return d
    }
}
