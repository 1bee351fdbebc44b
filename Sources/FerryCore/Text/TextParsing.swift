/// The little text handling header values, URLs and key files need, in the standard library
/// alone (the agent links FoundationEssentials only, which has none of these).
extension StringProtocol {
    /// Without leading and trailing white space.
    public var trimmingSpaces: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// "%E2%82%AC" → "€". Nil when an escape is malformed or the bytes are not UTF-8.
    var percentDecoded: String? { percentDecodedBytes.flatMap { String(validating: $0, as: UTF8.self) } }

    /// "%A3%20rates" → "£ rates", each byte one ISO-8859-1 character. Nil when an escape is malformed.
    var percentDecodedLatin1: String? {
        percentDecodedBytes.map { String(String.UnicodeScalarView($0.map { Unicode.Scalar($0) })) }
    }

    /// The bytes the escapes stand for; nil when one is malformed.
    var percentDecodedBytes: [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var it = utf8.makeIterator()
        while let b = it.next() {
            guard b == UInt8(ascii: "%") else { bytes.append(b); continue }
            guard let high = it.next().flatMap(Self.hexDigit), let low = it.next().flatMap(Self.hexDigit) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Where `needle` (ASCII) first occurs, ignoring ASCII case ("Realm=" finds "realm=").
    func rangeIgnoringASCIICase(of needle: String) -> Range<Index>? {
        let n = Array(needle.utf8).map(Self.asciiLower)
        guard !n.isEmpty else { return nil }
        var start = utf8.startIndex
        while start != utf8.endIndex {
            var i = start, k = 0
            while k < n.count, i != utf8.endIndex, Self.asciiLower(utf8[i]) == n[k] {
                utf8.formIndex(after: &i)
                k += 1
            }
            if k == n.count { return start..<i }
            utf8.formIndex(after: &start)
        }
        return nil
    }

    private static func asciiLower(_ c: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) ? c + 32 : c
    }
}
