import CGLib
import FerryCore
import FoundationEssentials

/// GNOME keeps one set of proxy credentials, under `org.gnome.system.proxy.http`, and its proxy
/// resolver hands them out with the http proxy only: an `https://` URL gets the https proxy's
/// URI bare, and a proxy that wants credentials answers 407 to every CONNECT. GNOME's own apps
/// use the http proxy's credentials for the https proxy when it is the same host and port; so
/// does the agent. Read from GSettings when a proxy is looked up (dconf: a memory-mapped file).
enum DesktopProxyCredentials {
    /// `uri` (one of the resolver's answers for `url`) with GNOME's http proxy credentials when
    /// `url` is https, the answer names no credentials and is the same proxy.
    static func added(to uri: String, for url: String) -> String {
        guard url.lowercased().hasPrefix("https://"), let sep = uri.firstRange(of: "://") else { return uri }
        let scheme = uri[..<sep.lowerBound].lowercased()
        let rest = String(uri[sep.upperBound...].prefix { $0 != "/" })  // the proxy's host:port
        guard scheme == "http" || scheme == "https", !rest.contains("@"),
            let (host, port) = hostAndPort(rest), let userInfo = httpProxyUserInfo(host: host, port: port)
        else {
            return uri
        }
        return String(uri[..<sep.upperBound]) + userInfo + "@" + String(uri[sep.upperBound...])
    }

    /// "user:password@" as curl reads it (percent-encoded), from GNOME's settings when its http
    /// proxy is `host`:`port` and uses authentication.
    static func httpProxyUserInfo(host: String, port: Int) -> String? {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, "org.gnome.system.proxy.http", 1)
        else { return nil }
        defer { g_settings_schema_unref(schema) }
        guard let settings = g_settings_new_full(schema, nil, nil) else { return nil }
        defer { g_object_unref(settings) }
        guard g_settings_get_boolean(settings, "use-authentication") != 0,
            Int(g_settings_get_int(settings, "port")) == port,
            string(settings, "host").lowercased() == host.lowercased()
        else { return nil }
        let user = string(settings, "authentication-user"), password = string(settings, "authentication-password")
        guard !user.isEmpty else { return nil }
        return encoded(user) + ":" + encoded(password)
    }

    private static func string(_ settings: UnsafeMutablePointer<GSettings>, _ key: String) -> String {
        guard let p = g_settings_get_string(settings, key) else { return "" }
        defer { g_free(p) }
        return String(cString: p)
    }

    /// "host:port" or "[v6]:port" (GNOME's resolver always names the port).
    private static func hostAndPort(_ authority: String) -> (String, Int)? {
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...])
        else {
            return nil
        }
        var host = String(authority[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// Everything but unreserved characters as %XX (UTF-8).
    private static func encoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            let c = Character(Unicode.Scalar(b))
            if b < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded
            }
        }
        return out
    }
}

private extension String {
    var leftPadded: String { count < 2 ? "0" + self : self }
}
