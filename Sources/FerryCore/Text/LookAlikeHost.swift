/// Whether an international host name may be shown in its own letters, as Chromium and Firefox
/// decide after UTS #39: a label that mixes scripts (`аpple`: a Cyrillic а among Latin letters),
/// or is written wholly in Cyrillic or Greek letters that look Latin (`аррӏе`) under a TLD of
/// another script, is shown in its `xn--` form, which cannot pass for the name it imitates.
/// Scripts come from the caller (GLib's `g_unichar_get_script`): the core has no Unicode
/// script table.
public enum LookAlikeHost {
    /// The scripts the rule tells apart.
    public enum Script: Hashable, Sendable {
        /// Digits, hyphens, punctuation, combining marks: they go with any script.
        case common
        case latin, cyrillic, greek, han, hiragana, katakana, hangul, bopomofo
        case other(Int)
    }

    /// Cyrillic and Greek letters that a Latin reader takes for Latin ones.
    static let latinLookAlikes: Set<Unicode.Scalar> = Set(
        ("асԁеһіјӏорԛѕԝхуъьҽпгѵѡԍӓӧӱӕ" + "αικνορτυχϲϳ").unicodeScalars)

    /// Whether `host` (in Unicode) may be shown so.
    public static func mayShow(_ host: String, script: (Unicode.Scalar) -> Script) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let tld = labels.last.map { scripts(of: $0, script) } ?? []
        return labels.allSatisfy { label in
            let used = scripts(of: label, script)
            guard allowedTogether(used) else { return false }
            // A whole label of look-alikes, unless its TLD is of that script (`.рф`).
            if used.count == 1, let only = used.first, only == .cyrillic || only == .greek, !tld.contains(only),
                label.unicodeScalars.allSatisfy({ script($0) == .common || latinLookAlikes.contains($0) })
            {
                return false
            }
            return true
        }
    }

    private static func scripts(of label: Substring, _ script: (Unicode.Scalar) -> Script) -> Set<Script> {
        Set(label.unicodeScalars.map(script).filter { $0 != .common })
    }

    /// One script, or the mixes a language writes in (Japanese, Chinese, Korean with Latin).
    static func allowedTogether(_ used: Set<Script>) -> Bool {
        if used.count <= 1 { return true }
        let mixes: [Set<Script>] = [
            [.latin, .han, .hiragana, .katakana], [.latin, .han, .bopomofo], [.latin, .han, .hangul],
        ]
        return mixes.contains { used.isSubset(of: $0) }
    }
}
