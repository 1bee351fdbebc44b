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
    /// Tasks' credentials (their URL's, an answer to a challenge, a remembered one), each bound
    /// to the origin it was given for: memory only, never stored, gone when the task ends.
    var byTask: [Int64: BoundCredential] = [:]
    /// Answers to a proxy's 407, by task (memory only, as long as the task).
    var proxyByTask: [Int64: Credential] = [:]
    /// Tasks whose credentials challenge is their proxy's (the answer goes to the proxy).
    var proxyAsked: Set<Int64> = []

    struct PendingAnswer: Sendable {
        var outcome: TransferOutcome
        var canChallenge: Bool
    }

    func known(_ session: String, _ space: ProtectionSpace) -> Credential? { forSession[session]?[space] }

    mutating func keep(_ c: Credential, session: String, _ space: ProtectionSpace) {
        forSession[session, default: [:]][space] = c
    }

    /// A new task's URL carried user:password: the URL loses it (the store never sees it), and
    /// the credential, bound to the URL's origin, lives in memory (`byTask`) and in the keyring
    /// (the effect) until the task ends. Nothing for a URL without one.
    mutating func take(fromURLOf r: inout TaskRecord) -> [AgentEffect] {
        let (url, credential) = DownloadURL.splitCredential(r.url)
        guard let credential else { return [] }
        r.url = url
        inKeyring.insert(r.id)
        byTask[r.id] = BoundCredential(credential, origin: Origin(url))
        return [.keepCredential(.task(id: r.id, created: r.created, host: r.host), credential)]
    }

    /// Tasks an older agent stored with user:password in the URL: the store keeps the URL
    /// without it; a task still to run gets it in memory and the keyring as a new task would.
    mutating func moveOutOfURLs(_ records: [TaskRecord]) -> [AgentEffect] {
        var effects: [AgentEffect] = []
        for var r in records {
            if r.state.isFinal {
                let (url, credential) = DownloadURL.splitCredential(r.url)
                guard credential != nil else { continue }
                r.url = url
            } else {
                let url = r.url
                effects += take(fromURLOf: &r)
                guard r.url != url else { continue }
            }
            effects.append(.store(.update(r)))
        }
        return effects
    }

    /// What a transfer carries: the task's credential where its origin is the one it was given
    /// for, and its proxy's answer.
    func forTransfer(_ id: Int64, to url: String) -> (server: Credential?, proxy: Credential?) {
        (byTask[id]?.forRequest(to: url), proxyByTask[id])
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

    /// An attempt ended: a 401 may be answered from what the book holds (`challenged`); else
    /// the task's next answer is for its proxy after a 407, for its server after a 401.
    mutating func attemptEnded(
        _ r: TaskRecord, _ outcome: TransferOutcome, app: String, canChallenge: Bool
    )
        -> ChallengeStep
    {
        let step = challenged(r, outcome, app: app, canChallenge: canChallenge)
        guard step == .notTaken else { return step }
        if outcome.asksProxyCredentials {
            proxyAsked.insert(r.id)
        } else if outcome.httpStatus == 401 {
            proxyAsked.remove(r.id)
        }
        return step
    }

    /// A 401: one kept for its session is tried at once, else the keyring is asked (once a
    /// run); the app hears of it only when neither has one.
    mutating func challenged(
        _ r: TaskRecord, _ outcome: TransferOutcome, app: String, canChallenge: Bool
    )
        -> ChallengeStep
    {
        guard outcome.httpStatus == 401 else { return .notTaken }
        let current = byTask[r.id]
        let realm = TaskMachine.parseChallenge(outcome.authenticate).1
        // The space of the origin that asked: an upload resource or a redirect may be elsewhere.
        let space = ProtectionSpace(app: app, url: outcome.effectiveURL ?? r.url, realm: realm)
        challenged[r.id] = space
        guard current?.origin != space.origin, asked.insert(r.id).inserted else { return .notTaken }
        if let known = known(r.session, space) {
            let bound = BoundCredential(known, origin: space.origin)
            byTask[r.id] = bound
            return .useKnown(bound)
        }
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
        let bound = BoundCredential(credential, origin: challenged[id]?.origin)
        byTask[id] = bound
        return .use(bound)
    }

    /// An app's answer to a task's challenge, held for its next attempt (the proxy's when its
    /// proxy asked: never sent to a server); what the task's machine is to do with it.
    /// `url`: the task's, for the origin when the challenge's is unknown (after a restart).
    mutating func answer(
        _ id: Int64, _ reply: ChallengeReply, url: @autoclosure () -> String
    )
        -> TaskMachine.ChallengeAnswer
    {
        switch reply {
        case .credential(let c, _) where proxyAsked.contains(id):
            proxyByTask[id] = c
            return .useCredential
        case .credential(let c, _):
            byTask[id] = BoundCredential(c, origin: challenged[id]?.origin ?? Origin(url()))
            return .useCredential
        case .reject: return .reject
        case .cancel: return .cancel
        }
    }

    /// The task's machine took the answer (`taken`) or refused it: what the answer leaves
    /// held, and kept for the session or in the keyring as the app asked.
    mutating func answerTaken(
        _ id: Int64, _ reply: ChallengeReply, _ answer: TaskMachine.ChallengeAnswer, taken: Bool,
        session: @autoclosure () -> String?
    ) -> [AgentEffect] {
        if !taken && answer == .useCredential { byTask[id] = nil; proxyByTask[id] = nil }
        guard taken else { return [] }
        if answer != .useCredential { byTask[id] = nil }
        guard case .credential(let c, let persistence) = reply, !proxyAsked.contains(id) else { return [] }
        return keepAnswer(c, persistence, task: id, session: session())
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
    mutating func taskEnded(_ r: TaskRecord) -> [AgentEffect] { taskEnded(id: r.id, created: r.created, host: r.host) }

    mutating func taskEnded(id: Int64, created: Int64, host: String) -> [AgentEffect] {
        byTask[id] = nil  // an app's password lives no longer than its task
        proxyByTask[id] = nil
        proxyAsked.remove(id)
        challenged[id] = nil
        asked.remove(id)
        waiting[id] = nil
        guard inKeyring.remove(id) != nil else { return [] }
        return [.forgetCredential(.task(id: id, created: created, host: host))]
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
