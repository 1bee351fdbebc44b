import CGLib
import FerryCore

/// International host names, with GLib's IDNA (UTS #46) conversions, for IRI.
public enum Hostname {
    /// "bücher.example" → "xn--bcher-kva.example"; nil when it is not a valid name.
    public static func ascii(_ host: String) -> String? { converted(g_hostname_to_ascii(host)) }

    /// "xn--bcher-kva.example" → "bücher.example".
    public static func unicode(_ host: String) -> String? { converted(g_hostname_to_unicode(host)) }

    /// A URL as the user reads it (see IRI.readable).
    public static func readableURL(_ uri: String) -> String { IRI.readable(uri, hostToUnicode: unicode) }

    private static func converted(_ p: UnsafeMutablePointer<gchar>?) -> String? {
        guard let p else { return nil }
        defer { g_free(p) }
        return String(cString: p)
    }
}
