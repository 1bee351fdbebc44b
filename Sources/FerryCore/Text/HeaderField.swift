/// A request header the agent may send for an app. Checked as bytes: "\r\n" is a single Swift
/// Character, so searching a String for "\r" or "\n" misses the pair, and a value carrying it
/// would end the header and smuggle more into the request.
public enum HeaderField {
    /// A token: visible ASCII without ':' (RFC 9110's field-name, a little wider).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
    }

    /// No CR, LF or NUL anywhere (a NUL would cut the C string curl is handed).
    public static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}

extension HeaderField {
    /// An app's header fields are stored with each task (an app may keep 10,000): capped as
    /// URLs and descriptions are, so a task's row stays small.
    public static let maxFields = 100
    public static let maxValueBytes = 8192
    public static let maxTotalBytes = 65536

    /// The fields a task may carry, or an error naming the first rule they break.
    public static func checkFields(_ fields: [String: String]) throws {
        guard fields.count <= maxFields else {
            throw FerryError(.invalidArgument, "\(fields.count) header fields: at most \(maxFields) a task")
        }
        var total = 0
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard isValidName(name), isValidValue(value) else {
                throw FerryError(.invalidArgument, "invalid header '\(name.prefix(64))'")
            }
            guard name.utf8.count + value.utf8.count <= maxValueBytes else {
                throw FerryError(
                    .invalidArgument, "header '\(name.prefix(64))' longer than \(maxValueBytes) bytes")
            }
            total += name.utf8.count + value.utf8.count + 4  // ": " and CRLF, as sent
        }
        guard total <= maxTotalBytes else {
            throw FerryError(.invalidArgument, "header fields of \(total) bytes: at most \(maxTotalBytes) a task")
        }
    }
}
