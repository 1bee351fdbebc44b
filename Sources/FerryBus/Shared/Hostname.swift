import CGLib
import FerryCore

/// International host names, with GLib's IDNA (UTS #46) conversions, for IRI.
public enum Hostname {
    /// "bücher.example" → "xn--bcher-kva.example"; nil when it is not a valid name.
    public static func ascii(_ host: String) -> String? { converted(g_hostname_to_ascii(host)) }

    /// "xn--bcher-kva.example" → "bücher.example".
    public static func unicode(_ host: String) -> String? { converted(g_hostname_to_unicode(host)) }

    /// A URL as the user reads it (see IRI.readable), its host in its own letters only where
    /// they cannot pass for another name (`LookAlikeHost`).
    public static func readableURL(_ uri: String) -> String { IRI.readable(uri, hostToUnicode: shown) }

    /// A host as the user reads it: its Unicode form where `LookAlikeHost` allows, else as is.
    public static func shown(_ host: String) -> String? {
        guard host.contains("xn--"), let unicode = unicode(host), LookAlikeHost.mayShow(unicode, script: script) else {
            return host
        }
        return unicode
    }

    static func script(_ s: Unicode.Scalar) -> LookAlikeHost.Script {
        switch g_unichar_get_script(gunichar(s.value)) {
        case G_UNICODE_SCRIPT_COMMON, G_UNICODE_SCRIPT_INHERITED: .common
        case G_UNICODE_SCRIPT_LATIN: .latin
        case G_UNICODE_SCRIPT_CYRILLIC: .cyrillic
        case G_UNICODE_SCRIPT_GREEK: .greek
        case G_UNICODE_SCRIPT_HAN: .han
        case G_UNICODE_SCRIPT_HIRAGANA: .hiragana
        case G_UNICODE_SCRIPT_KATAKANA: .katakana
        case G_UNICODE_SCRIPT_HANGUL: .hangul
        case G_UNICODE_SCRIPT_BOPOMOFO: .bopomofo
        case let other: .other(Int(other.rawValue))
        }
    }

    private static func converted(_ p: UnsafeMutablePointer<gchar>?) -> String? {
        guard let p else { return nil }
        defer { g_free(p) }
        return String(cString: p)
    }
}
