import FoundationEssentials

/// Validates a URL handed to the agent before anything is stored.
public enum DownloadURL {
    public static let schemes: Set<String> = ["http", "https"]

    /// Returns the host (lowercased) of a valid http(s) URL, or throws a FerryError naming the problem.
    public static func validate(_ string: String) throws -> String {
        guard !string.isEmpty else { throw FerryError(.invalidURL, "empty URL") }
        guard string.utf8.count <= 8192 else { throw FerryError(.invalidURL, "URL longer than 8192 bytes") }
        // Bytes, not scalars: below 0x80 UTF-8 has only ASCII, so this finds the same ones.
        guard !string.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) else {
            throw FerryError(.invalidURL, "URL contains spaces or control characters: \(printable(string))")
        }
        guard let comps = URLComponents(string: string), let scheme = comps.scheme?.lowercased() else {
            throw FerryError(.invalidURL, "not a valid URL: \(printable(string))")
        }
        guard schemes.contains(scheme) else {
            throw FerryError(
                .unsupportedScheme,
                "unsupported scheme '\(scheme)' in \(printable(string)): only http and https are supported")
        }
        guard let host = comps.host, !host.isEmpty else {
            throw FerryError(.invalidURL, "URL has no host: \(printable(string))")
        }
        return host.lowercased()
    }

    /// A host on this machine: reachable whatever the network monitor says about routes.
    public static func isLoopback(host: String) -> Bool {
        let h = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return h == "localhost" || h.hasSuffix(".localhost") || h.hasPrefix("127.") || h == "::1"
    }

    /// The URL without user:password, for logs and messages.
    public static func printable(_ string: String) -> String {
        // No "@", no user information: the parse (a page of tasks makes 100) is not needed.
        guard string.utf8.contains(UInt8(ascii: "@")), var comps = URLComponents(string: string),
            comps.password != nil || comps.user != nil
        else {
            return String(string.prefix(200))
        }
        comps.user = nil; comps.password = nil
        return String((comps.string ?? "").prefix(200))
    }

    /// An http(s) URL as written, split without a parse: `scheme://authority` and the path up to
    /// its query or fragment (percent-encoded as written). nil for any other URL, or one with
    /// spaces or control characters: those take URLComponents. The split is RFC 3986's (the
    /// authority ends at the first "/", "?" or "#"), as URLComponents makes it of a URL that
    /// parses; a task's URL, which was checked when the task was made, always does. A parse
    /// per use cost more than any other step of starting a small file (3 a file).
    public static func plainParts(_ url: String) -> (origin: Substring, path: Substring)? {
        // Offsets found in the bytes; a String's own UTF-8 is contiguous (else: no split).
        let found = url.utf8.withContiguousStorageIfAvailable { b -> (originEnd: Int, pathEnd: Int)? in
            let n = b.count
            func lower(_ i: Int) -> UInt8 { b[i] | 0x20 }  // ASCII letters to lower case
            guard n >= 8, lower(0) == 0x68, lower(1) == 0x74, lower(2) == 0x74, lower(3) == 0x70 else { return nil }
            let colon = lower(4) == 0x73 ? 5 : 4  // "http" or "https"
            guard b[colon] == 0x3A, b[colon + 1] == 0x2F, b[colon + 2] == 0x2F else { return nil }
            var originEnd = n, pathEnd = n
            for i in (colon + 3)..<n {
                let c = b[i]
                guard c > 0x20 && c != 0x7F else { return nil }  // spaces, controls: URLComponents decides
                if c == 0x2F, originEnd == n { originEnd = i }  // "/"
                if c == 0x3F || c == 0x23, pathEnd == n {  // "?" "#"
                    pathEnd = i
                    if originEnd == n { originEnd = i }
                }
            }
            return (originEnd, pathEnd)
        }
        guard let found, let (originEnd, pathEnd) = found else { return nil }
        let u = url.utf8
        let a = u.index(u.startIndex, offsetBy: originEnd), p = u.index(u.startIndex, offsetBy: pathEnd)
        return (url[url.startIndex..<a], url[a..<p])
    }
}
