import FerryCore

/// Reading one option of an a{sv}: a wrong type is an InvalidArgument naming the option.
enum OptionValue {
    static func string(_ d: [String: Value], _ key: String) throws -> String? {
        guard let v = d[key] else { return nil }
        guard let s = v.stringValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a string") }
        return s
    }
    static func bool(_ d: [String: Value], _ key: String) throws -> Bool? {
        guard let v = d[key] else { return nil }
        guard let b = v.boolValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a boolean") }
        return b
    }
    static func count(_ d: [String: Value], _ key: String) throws -> Int? {
        guard let v = d[key] else { return nil }
        guard let i = v.int64Value, i >= 0 else { throw FerryError(.invalidArgument, "option '\(key)' must be a non-negative integer") }
        return Int(i)
    }
    static func strings(_ d: [String: Value], _ key: String) throws -> [String]? {
        guard let v = d[key] else { return nil }
        guard case .strings(let s) = v else { throw FerryError(.invalidArgument, "option '\(key)' must be an array of strings") }
        return s
    }
    static func stringDict(_ d: [String: Value], _ key: String) throws -> [String: String]? {
        guard let v = d[key] else { return nil }
        guard case .stringDict(let s) = v else { throw FerryError(.invalidArgument, "\(key) must be a{ss}") }
        return s
    }
}
