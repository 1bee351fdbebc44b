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
}
