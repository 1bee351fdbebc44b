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

    /// A new task's URL carried user:password: the URL loses it (the store never sees it), and
    /// the credential, bound to the URL's origin, lives in memory and in the keyring until the
    /// task ends. nil: the URL had none.
    mutating func take(fromURLOf r: inout TaskRecord) -> (BoundCredential, keep: AgentEffect)? {
        let (url, credential) = DownloadURL.splitCredential(r.url)
        guard let credential else { return nil }
        r.url = url
        inKeyring.insert(r.id)
        return (
            BoundCredential(credential, origin: Origin(url)),
            .keepCredential(.task(id: r.id, created: r.created, host: r.host), credential)
        )
    }

    /// What a failed attempt means for the credentials.
    enum ChallengeStep: Sendable, Equatable {
        /// Not a 401 this book takes (not one, a credential for that origin was tried, or the
        /// keyring was asked once already): the task's machine decides alone.
        case notTaken
        /// A credential kept for the session answers it at once.
        case useKnown(BoundCredential)
        /// Ask the keyring for the first of these; the task waits with the 401 meanwhile.
        case askKeyring([CredentialKey])
    }

    /// A 401 for a task holding `current`: one kept for its session is tried at once, else the
    /// keyring is asked (once a run); the app hears of it only when neither has one.
    mutating func challenged(
        _ r: TaskRecord, _ outcome: TransferOutcome, app: String, holding current: BoundCredential?,
        canChallenge: Bool
    ) -> ChallengeStep {
        guard outcome.httpStatus == 401 else { return .notTaken }
        let realm = TaskMachine.parseChallenge(outcome.authenticate).1
        // The space of the origin that asked: an upload resource or a redirect may be elsewhere.
        let space = ProtectionSpace(app: app, url: outcome.effectiveURL ?? r.url, realm: realm)
        challenged[r.id] = space
        guard current?.origin != space.origin, asked.insert(r.id).inserted else { return .notTaken }
        if let known = known(r.session, space) { return .useKnown(BoundCredential(known, origin: space.origin)) }
        waiting[r.id] = PendingAnswer(outcome: outcome, canChallenge: canChallenge)
        // The task's own (its URL's) only where its origin asked.
        let own: [CredentialKey] =
            space.origin == Origin(r.url) ? [.task(id: r.id, created: r.created, host: r.host)] : []
        return .askKeyring(own + [.space(space)])
    }

    /// The keyring's answer for a task that waits with a 401.
    enum KeyringAnswer: Sendable {
        /// No task waits for it (it ended meanwhile).
        case unasked
        case use(BoundCredential)
        /// Nothing there: the 401 goes on as it came.
        case none(PendingAnswer)
    }

    mutating func keyringAnswered(_ id: Int64, _ credential: Credential?) -> KeyringAnswer {
        guard let pending = waiting.removeValue(forKey: id) else { return .unasked }
        guard let credential else { return .none(pending) }
        inKeyring.insert(id)  // it may be the task's own (from its URL): forgotten when it ends
        return .use(BoundCredential(credential, origin: challenged[id]?.origin))
    }

    /// An app answered a challenge: its credential is kept as long as it asked, for the space
    /// the task was challenged for (unknown after a restart: then for the task only).
    mutating func keepAnswer(
        _ c: Credential, _ persistence: CredentialPersistence, task id: Int64, session: @autoclosure () -> String?
    ) -> [AgentEffect] {
        guard persistence != .none, let space = challenged[id], let session = session() else { return [] }
        keep(c, session: session, space)
        return persistence == .permanent ? [.keepCredential(.space(space), c)] : []
    }

    /// A task ended: what it alone held goes, the keyring's copy of its URL's credential too.
    mutating func taskEnded(_ r: TaskRecord) -> [AgentEffect] {
        challenged[r.id] = nil
        asked.remove(r.id)
        waiting[r.id] = nil
        guard inKeyring.remove(r.id) != nil else { return [] }
        return [.forgetCredential(.task(id: r.id, created: r.created, host: r.host))]
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
