import CGLib
import CSecret
import FerryBus
import FerryCore
import FoundationEssentials
import Logging

/// The user's keyring through the Secret Service (libsecret; GNOME Keyring, KeePassXC, KWallet
/// 6): where remembered credentials and the ones from tasks' URLs live instead of the store.
/// Every call is asynchronous (a locked keyring may ask the user to unlock it); answers come
/// back on the loop. No keyring on the bus: nothing is kept and lookups find nothing, said once.
final class Keyring {
    private let log: Logger
    private var saidUnavailable = false

    init(log: Logger) { self.log = log }

    /// Replaces what is kept under `key` with `credential`.
    func keep(_ key: CredentialKey, _ credential: Credential) {
        let label = Self.label(key)
        forget(key) {
            let attributes = Self.attributes(key, user: credential.user)
            secret_password_storev(
                Self.schema, attributes, SECRET_COLLECTION_DEFAULT, label, credential.password, nil,
                { _, result, data in
                    let (me, label) = Box<(Keyring, String)>.take(data!)
                    var error: UnsafeMutablePointer<GError>?
                    if secret_password_store_finish(result, &error) == 0 {
                        me.failed("could not keep a credential (\(label))", &error)
                    }
                }, Box<(Keyring, String)>.retained((self, label)))
            g_hash_table_unref(attributes)
        }
    }

    /// Removes what is kept under `key` (then calls `done`).
    func forget(_ key: CredentialKey, _ done: @escaping () -> Void = {}) {
        let attributes = Self.attributes(key)
        secret_password_clearv(
            Self.schema, attributes, nil,
            { _, result, data in
                let (me, done) = Box<(Keyring, () -> Void)>.take(data!)
                var error: UnsafeMutablePointer<GError>?
                _ = secret_password_clear_finish(result, &error)
                if error != nil { me.failed("could not remove a credential", &error) }
                done()
            }, Box<(Keyring, () -> Void)>.retained((self, done)))
        g_hash_table_unref(attributes)
    }

    /// The credential kept under the first of `keys` that has one (nil: none, or no keyring).
    func find(_ keys: [CredentialKey], _ done: @escaping (Credential?) -> Void) {
        guard let key = keys.first else { done(nil); return }
        let attributes = Self.attributes(key)
        let flags = SecretSearchFlags(rawValue: SECRET_SEARCH_UNLOCK.rawValue | SECRET_SEARCH_LOAD_SECRETS.rawValue)
        secret_service_search(
            nil, Self.schema, attributes, flags, nil,
            { _, result, data in
                let (me, keys, done) = Box<(Keyring, [CredentialKey], (Credential?) -> Void)>.take(data!)
                var error: UnsafeMutablePointer<GError>?
                let items = secret_service_search_finish(nil, result, &error)
                if error != nil { me.failed("could not look for a credential", &error) }
                if let found = Keyring.credential(in: items) {
                    done(found)
                } else if keys.count > 1 {
                    me.find(Array(keys.dropFirst()), done)
                } else {
                    done(nil)
                }
            }, Box<(Keyring, [CredentialKey], (Credential?) -> Void)>.retained((self, keys, done)))
        g_hash_table_unref(attributes)
    }

    private func failed(_ what: String, _ error: inout UnsafeMutablePointer<GError>?) {
        let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        g_clear_error(&error)
        // The usual case, no Secret Service on the bus, is said once; anything else each time.
        let unavailable = message.contains("org.freedesktop.secrets")
        guard !unavailable || !saidUnavailable else { return }
        saidUnavailable = saidUnavailable || unavailable
        log.warning(
            "keyring: \(what): \(message)\(unavailable ? " (credentials from URLs are then kept in memory only)" : "")")
    }

    // MARK: - Items

    /// The user name and password of the first item (taking the list).
    private static func credential(in items: UnsafeMutablePointer<GList>?) -> Credential? {
        defer { g_list_free_full(items, g_object_unref) }
        guard let item = items?.pointee.data?.assumingMemoryBound(to: SecretItem.self),
            let value = secret_item_get_secret(item)
        else { return nil }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        guard let text = secret_value_get_text(value) else { return nil }
        let attributes = secret_item_get_attributes(item)
        defer { g_hash_table_unref(attributes) }
        let user =
            g_hash_table_lookup(attributes, "user").map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
            ?? ""
        return Credential(user: user, password: String(cString: text))
    }

    private static func label(_ key: CredentialKey) -> String {
        switch key {
        case .space(let s): return "Ferry: \(s.scheme)://\(s.host):\(s.port)" + (s.realm.isEmpty ? "" : " (\(s.realm))")
        case .task(let id, _, let host): return "Ferry: task \(id) (\(host))"
        }
    }

    private static func attributes(_ key: CredentialKey, user: String? = nil) -> OpaquePointer {
        var pairs: [(String, String)]
        switch key {
        case .space(let s):
            pairs = [
                ("kind", "space"), ("app", s.app), ("scheme", s.scheme), ("host", s.host), ("port", String(s.port)),
                ("realm", s.realm),
            ]
        case .task(let id, let created, let host):
            pairs = [("kind", "task"), ("task", String(id)), ("created", String(created)), ("host", host)]
        }
        if let user { pairs.append(("user", user)) }
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        for (k, v) in pairs { g_hash_table_insert(table, g_strdup(k), g_strdup(v)) }
        return table
    }

    /// Ferry's items: every attribute a string; found by the ones a key gives.
    private static let schema: UnsafePointer<SecretSchema> = {
        let p = UnsafeMutablePointer<SecretSchema>.allocate(capacity: 1)
        p.initialize(to: SecretSchema())
        p.pointee.name = UnsafePointer(strdup("dev.ferry.Credential"))
        p.pointee.flags = SECRET_SCHEMA_NONE
        let names = ["kind", "app", "scheme", "host", "port", "realm", "task", "created", "user"]
        withUnsafeMutableBytes(of: &p.pointee.attributes) { raw in
            let slots = raw.bindMemory(to: SecretSchemaAttribute.self)
            for (i, name) in names.enumerated() {
                slots[i] = SecretSchemaAttribute(
                    name: UnsafePointer(strdup(name)), type: SECRET_SCHEMA_ATTRIBUTE_STRING)
            }
        }
        return UnsafePointer(p)
    }()
}
