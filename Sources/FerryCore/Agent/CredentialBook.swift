import FoundationEssentials

/// Where a credential applies, as URLProtectionSpace has it: an app's (empty: the host's
/// programs, which share the user's keyring anyway), for one scheme, host, port and realm.
public struct ProtectionSpace: Sendable, Hashable {
    public var app: String
    public var scheme: String
    public var host: String
    public var port: Int
    public var realm: String
    public init(app: String, scheme: String, host: String, port: Int, realm: String) {
        self.app = app; self.scheme = scheme; self.host = host; self.port = port; self.realm = realm
    }

    /// The origin a credential for this space may be sent to.
    public var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    /// The space of a task's URL for a challenge's realm.
    public init(app: String, url: String, realm: String) {
        let c = URLComponents(string: url)
        let scheme = c?.scheme?.lowercased() ?? "http"
        self.init(
            app: app, scheme: scheme, host: c?.host?.lowercased() ?? "",
            port: c?.port ?? (scheme == "https" ? 443 : 80), realm: realm)
    }
}

/// A credential in the user's keyring (the Secret Service): one an app chose to keep for a
/// protection space, or the one in a task's URL, kept there (not in the store) until the task ends.
public enum CredentialKey: Sendable, Hashable {
    case space(ProtectionSpace)
    /// `created` makes the key unique even if task ids start again (a new state folder).
    case task(id: Int64, created: Int64, host: String)
}

/// How long an app's answer to a challenge is kept (URLCredential.Persistence).
public enum CredentialPersistence: String, Sendable, Equatable, CaseIterable {
    /// For the task that was challenged only.
    case none
    /// Also for the session's later tasks in that protection space, until the session is
    /// invalidated or the agent exits (memory only).
    case forSession = "for-session"
    /// In the user's keyring, for the app's tasks in that protection space, across restarts.
    case permanent
}

/// The credentials the agent may use beyond a task's own: those kept for a session, and
/// which tasks already asked the keyring in this run (once each: a wrong remembered
/// credential then becomes a challenge like any other).
struct CredentialBook: Sendable {
    /// Answers kept for a session (persistence "for-session", and "permanent" ones, which the
    /// keyring also keeps), by session.
    var forSession: [String: [ProtectionSpace: Credential]] = [:]
    /// The protection space each task was last challenged for (a 401's realm).
    var challenged: [Int64: ProtectionSpace] = [:]
    /// Tasks whose credential is in the keyring under `.task` (forgotten when they end).
    var inKeyring: Set<Int64> = []
    /// Tasks that asked the keyring this run, and the 401 each waits with meanwhile.
    var asked: Set<Int64> = []
    var waiting: [Int64: PendingAnswer] = [:]

    struct PendingAnswer: Sendable {
        var outcome: TransferOutcome
        var canChallenge: Bool
    }

    func known(_ session: String, _ space: ProtectionSpace) -> Credential? { forSession[session]?[space] }

    mutating func keep(_ c: Credential, session: String, _ space: ProtectionSpace) {
        forSession[session, default: [:]][space] = c
    }

    /// A task ended: what it alone held goes.
    mutating func taskEnded(_ id: Int64) -> Bool {
        challenged[id] = nil
        asked.remove(id)
        waiting[id] = nil
        return inKeyring.remove(id) != nil
    }
}

extension DownloadURL {
    /// The URL without its user information, and the credential that was in it
    /// (percent-decoded); the URL as given when it has none.
    public static func splitCredential(_ string: String) -> (url: String, credential: Credential?) {
        guard string.utf8.contains(UInt8(ascii: "@")), var c = URLComponents(string: string),
            c.user != nil || c.password != nil
        else {
            return (string, nil)
        }
        let credential = Credential(user: c.user ?? "", password: c.password ?? "")
        c.user = nil; c.password = nil
        return (c.string ?? string, credential)
    }
}
