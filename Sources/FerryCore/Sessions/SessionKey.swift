/// Sessions belong to their owner: a sandboxed app's session name is its own, whatever another
/// app (or the user) named theirs. Nested app ids make names overlap — `org.example.Nest` may
/// name a session `org.example.Nest.Child.Bg`, inside the namespace of an app
/// `org.example.Nest.Child` — so when a name is already another owner's, the app's session of
/// that name is kept under an alias, `NAME [APPID]`, which the app never sees: it reads and
/// writes its own name. (No caller can make such a key: session names have no spaces.)
public enum SessionKey {
    public static func alias(_ name: String, app: String) -> String { "\(name) [\(app)]" }

    /// The name the app knows for its session `key`.
    public static func name(of key: String, app: String) -> String {
        let suffix = " [\(app)]"
        return key.hasSuffix(suffix) ? String(key.dropLast(suffix.count)) : key
    }
}
