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

extension AgentRequest {
    /// The same request with each session name replaced (an empty one, "all of them", stays).
    func withSession(_ key: (String) throws -> String) rethrows -> AgentRequest {
        func k(_ s: String) throws -> String { s.isEmpty ? s : try key(s) }
        switch self {
        case .openSession(let s, let o, let peer): return .openSession(try k(s), o, peer: peer)
        case .createTasks(let s, let drafts): return .createTasks(session: try k(s), drafts)
        case .createFromResumeData(let s, let d, let r, let given):
            return .createFromResumeData(session: try k(s), d, r, destinationGiven: given)
        case .listTasks(let s, let after, let limit): return .listTasks(session: try k(s), after: after, limit: limit)
        case .listSection(let s, let active, let offset, let limit):
            return .listSection(session: try k(s), active: active, offset: offset, limit: limit)
        case .finishedHandlingEvents(let s): return .finishedHandlingEvents(try k(s))
        case .invalidateSession(let s, let cancel): return .invalidateSession(try k(s), cancelTasks: cancel)
        case .getSession(let s): return .getSession(try k(s))
        case .fetchEvents(let s, let after, let limit):
            return .fetchEvents(session: try k(s), after: after, limit: limit)
        case .acknowledgeEvents(let s, let seq): return .acknowledgeEvents(session: try k(s), upTo: seq)
        case .clearFinished(let s): return .clearFinished(session: try k(s))
        case .pauseAll(let s): return .pauseAll(session: try k(s))
        case .resumeAll(let s): return .resumeAll(session: try k(s))
        case .getTask, .pause, .resume, .cancel, .cancelProducingResumeData, .answerChallenge, .resetBadge,
            .removeTasks,
            .status, .sandboxed:
            return self
        }
    }
}

extension AgentReply {
    /// The reply as `app` reads it: its sessions under the names it gave them.
    func named(for app: String) -> AgentReply {
        func n(_ key: String) -> String { SessionKey.name(of: key, app: app) }
        func shown(_ r: TaskRecord) -> TaskRecord { var r = r; r.session = n(r.session); return r }
        switch self {
        case .session(let key, let created, let seq, let inbox):
            return .session(identifier: n(key), created: created, latestSeq: seq, inbox: inbox)
        case .tasks(let list): return .tasks(list.map(shown))
        case .task(let r): return .task(shown(r))
        case .sessionInfo(var info): info.identifier = n(info.identifier); return .sessionInfo(info)
        default: return self
        }
    }
}
