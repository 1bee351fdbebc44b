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
