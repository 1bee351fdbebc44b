import FoundationEssentials

/// Addresses as people paste them (an IRI: `…/get?q=日本`, `http://bücher.example/`) and as
/// they go on the wire (a URI: UTF-8 percent-encoding, IDNA for the host), both ways. Strict
/// servers answer 400 to raw UTF-8 in a request line; people read the letters, not the escapes.
/// The host's IDNA conversion is the caller's (GLib's `g_hostname_to_ascii`): the core has none.
public enum IRI {
    /// The URI for `string`: itself when it is ASCII already (no parse); else its non-ASCII
    /// characters percent-encoded and its host in IDNA form.
    public static func uri(_ string: String, hostToASCII: (String) -> String?) throws -> String {
        guard !string.utf8.allSatisfy({ $0 < 0x80 }) else { return string }
        guard var comps = URLComponents(string: string), let encoded = comps.string else {
            throw FerryError(.invalidURL, "not a valid URL: \(DownloadURL.printable(string))")
        }
        guard let host = comps.host, !host.utf8.allSatisfy({ $0 < 0x80 }) else { return encoded }
        guard let ascii = hostToASCII(host), !ascii.isEmpty, ascii.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw FerryError(.invalidURL, "host '\(host.prefix(100))' is not a valid international domain name")
        }
        comps.percentEncodedHost = ascii
        return comps.string ?? encoded
    }

    /// `uri` as a person reads it: escapes of UTF-8 letters decoded (never those of ASCII
    /// characters, which may be delimiters, nor of what cannot be seen: `VisibleText`), an
    /// IDNA host in its own letters when `hostToUnicode` finds that safe to show.
    public static func readable(_ uri: String, hostToUnicode: (String) -> String?) -> String {
        var text = decodeLetters(uri)
        if text.contains("xn--"), let host = hostRange(text) {
            let ascii = String(text[host])
            if let unicode = hostToUnicode(ascii), unicode != ascii { text.replaceSubrange(host, with: unicode) }
        }
        return text
    }

    /// Decodes runs of `%XX` escapes of bytes ≥ 0x80 that form UTF-8; keeps everything else.
    static func decodeLetters(_ s: String) -> String {
        guard s.utf8.contains(UInt8(ascii: "%")) else { return s }
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            var run: [UInt8] = []
            var j = i
            while j + 2 < bytes.count, bytes[j] == UInt8(ascii: "%"),
                let hi = String.hexDigit(bytes[j + 1]), let lo = String.hexDigit(bytes[j + 2]), hi << 4 | lo >= 0x80
            {
                run.append(hi << 4 | lo)
                j += 3
            }
            if !run.isEmpty, let letters = String(validating: run, as: UTF8.self) {
                out += VisibleText.escaped(letters).utf8
                i = j
            } else if !run.isEmpty {
                out += bytes[i..<j]
                i = j
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Where the host is in an absolute URL (after `scheme://` and any user information).
    static func hostRange(_ s: String) -> Range<String.Index>? {
        guard let start = s.rangeIgnoringASCIICase(of: "://")?.upperBound else { return nil }
        let end = s[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? s.endIndex
        var hostStart = start
        if let at = s[start..<end].lastIndex(of: "@") { hostStart = s.index(after: at) }
        guard hostStart < end, s[hostStart] != "[" else { return nil }  // none, or an IPv6 literal
        let hostEnd = s[hostStart..<end].firstIndex(of: ":") ?? end
        return hostStart..<hostEnd
    }
}
