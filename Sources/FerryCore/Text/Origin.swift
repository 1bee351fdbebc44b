import FoundationEssentials

/// Where a request goes, as the web's same-origin rule has it: scheme, host and port. Every
/// credential the agent holds for a task is bound to one (RFC 6454): the URL's user:password and
/// an app's own credential headers to the task's URL, an answer to a challenge to the origin
/// that sent the 401. A request to any other origin (an upload resource on another host, a 104
/// announcement) carries none of them.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int

    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme; self.host = host; self.port = port
    }

    /// nil for a URL without a scheme or host.
    public init?(_ url: String) {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(), let host = c.host, !host.isEmpty
        else {
            return nil
        }
        self.init(scheme: scheme, host: host.lowercased(), port: c.port ?? (scheme == "https" ? 443 : 80))
    }

    /// scheme://host:port, as a challenge names it.
    public var description: String {
        "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\(port)"
    }

    /// Whether two URLs share an origin; a URL that names none shares nothing.
    public static func same(_ a: String, _ b: String) -> Bool {
        guard let x = Origin(a) else { return false }
        return x == Origin(b)
    }
}

/// A credential and the one origin it may be sent to.
public struct BoundCredential: Sendable, Equatable {
    public var credential: Credential
    public var origin: Origin?

    public init(_ credential: Credential, origin: Origin?) { self.credential = credential; self.origin = origin }

    /// The credential for a request to `url`: nil unless it is the origin it was given for.
    public func forRequest(to url: String) -> Credential? {
        guard let origin, origin == Origin(url) else { return nil }
        return credential
    }
}

extension HeaderField {
    /// Request headers that carry a credential: they go only to the task's own origin.
    public static func isCredential(_ name: String) -> Bool {
        ["authorization", "cookie", "proxy-authorization"].contains(name.lowercased())
    }

    /// An app's headers for a request to `url`: all of them on the task's origin (`taskURL`);
    /// on any other origin (an upload resource a server named) only the resumable protocols'
    /// own fields, never one the app set: an app's credential may hide in any name
    /// (`X-Api-Key`, `Private-Token`…), so no list of credential names can be complete.
    public static func forRequest(_ headers: [String: String], to url: String, taskURL: String) -> [String: String] {
        guard url != taskURL, !Origin.same(url, taskURL) else { return headers }
        return headers.filter { isProtocolField($0.key) }
    }

    /// tus's and the IETF draft's fields, and the body's type and length.
    public static func isProtocolField(_ name: String) -> Bool {
        let n = name.lowercased()
        return n == "tus-resumable" || n.hasPrefix("upload-") || n == "content-type" || n == "content-length"
    }
}
