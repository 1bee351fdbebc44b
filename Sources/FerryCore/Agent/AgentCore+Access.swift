/// What a sandboxed app may ask: everything, but only about the sessions it opened and their
/// tasks. Another app's (or the host's) session is refused by name (AccessDenied); another's task
/// does not exist for it (NoSuchTask: its existence is not revealed); listings and counts with no
/// session cover its own sessions only. It cannot reset the user's badge, nor set a command for
/// the agent to run. (Paths are checked by the bus layer, which can resolve them on disk.)
extension AgentCore {
    /// An app's request, its session names made keys (see `SessionKey`), its reply in its names.
    mutating func sandboxedRequest(_ app: SandboxedApp, _ r: AgentRequest, _ ledger: AgentLedger) throws -> AgentReply {
        do {
            let opening = if case .openSession = r { true } else { false }
            return try keyedRequest(app, r.withSession { try sessionKey($0, of: app, opening: opening, ledger) }, ledger)
                .named(for: app.id)
        } catch var e as FerryError {
            e.message = e.message.replacing(SessionKey.alias("", app: app.id), with: "")   // its names only
            throw e
        }
    }

    /// The key of the app's session `name`: its alias where it has one, or is `opening` a name
    /// another owner has; else the name (another's is then refused by name, as before).
    func sessionKey(_ name: String, of app: SandboxedApp, opening: Bool, _ ledger: AgentLedger) throws -> String {
        func owner(_ key: String) throws -> String? { try sessions.configs[key]?.app ?? ledger.session(key)?.app }
        let alias = SessionKey.alias(name, app: app.id)
        if try owner(alias) != nil { return alias }
        guard opening, let owner = try owner(name), !owner.utf8.elementsEqual(app.id.utf8) else { return name }
        return alias
    }

    private mutating func keyedRequest(_ app: SandboxedApp, _ r: AgentRequest, _ ledger: AgentLedger) throws -> AgentReply {
        func own(_ session: String) throws {
            guard let owner = try sessions.configs[session]?.app ?? ledger.session(session)?.app else { return }   // NoSuchSession follows
            guard owner.utf8.elementsEqual(app.id.utf8) else {
                throw FerryError(.accessDenied, "session '\(session)' belongs to another app; \(app.id) can use only the sessions it opened")
            }
        }
        func visible(_ id: Int64) throws {
            let session = try tasks.machines[id]?.record.session ?? ledger.task(id)?.session
            guard let session, let owner = try sessions.configs[session]?.app ?? ledger.session(session)?.app,
                  owner.utf8.elementsEqual(app.id.utf8) else {
                throw FerryError(.noSuchTask, "no task \(id)")
            }
        }
        let mine = sessions.configs.filter { $0.value.app.utf8.elementsEqual(app.id.utf8) }.keys.sorted()
        func each(_ session: String, _ body: (String) throws -> AgentReply) throws -> AgentReply {
            if !session.isEmpty { try own(session); return try body(session) }
            var total = 0
            for s in mine { if case .count(let n) = try body(s) { total += n } }
            return .count(total)
        }

        switch r {
        case .openSession(let id, let options, let peer):
            if options.launchCommand != nil {
                throw FerryError(.accessDenied, "launch-command refused: \(app.id) is sandboxed, so the agent relaunches it only as itself")
            }
            // Session ids are global: an app names its own only, so it can never take the user's
            // (dev.ferry.cli) or another app's before they open theirs.
            // Compared as bytes, and ASCII as app ids are: no Unicode-equivalent look-alikes.
            let name = SessionKey.name(of: id, app: app.id)
            guard name.utf8.allSatisfy({ $0 < 128 }), name.utf8.elementsEqual(app.id.utf8) || name.utf8.starts(with: (app.id + ".").utf8) else {
                throw FerryError(.accessDenied, "session '\(name.prefix(64))' refused: \(app.id) is sandboxed, so its session identifiers are '\(app.id)' or begin with '\(app.id).' (ASCII)")
            }
            try own(id)
            if sessions.configs[id] == nil { try settings.appLimits.admitSession(open: mine.count, app: app.id) }
            return try openSession(id, options, peer: peer, app: app, ledger)
        case .createTasks(let session, _), .createFromResumeData(let session, _, _, _):
            // Talking to the agent must not give an app the network its sandbox does not have.
            guard app.network else {
                throw FerryError(.accessDenied, "\(app.id) has no network permission (Flatpak: --share=network), so the agent fetches nothing for it")
            }
            try own(session)
            try admitTasks(r.newTasks, app, mine, ledger)

            // Resume data names the task whose kept bytes it continues: only the app's own.
            if case .createFromResumeData(_, let data, _, _) = r {
                guard data.signedByAgent else {
                    throw FerryError(.invalidResumeData, "the resume data is not signed by this agent (an app may only continue from resume data the agent gave out)")
                }
                do { try visible(data.task) } catch {
                    throw FerryError(.invalidResumeData, "the resume data is not of one of \(app.id)'s tasks")
                }
            }
            switch r {
            case .createTasks(let s, let drafts):
                return try request(.createTasks(session: s, drafts.map(Self.rankedBelowTheUser)), ledger)
            case .createFromResumeData(let s, let data, let draft, let given):
                return try request(.createFromResumeData(session: s, data, Self.rankedBelowTheUser(draft), destinationGiven: given), ledger)
            default:
                return try request(r, ledger)
            }
        case .finishedHandlingEvents(let session), .invalidateSession(let session, _), .getSession(let session),
             .fetchEvents(let session, _, _), .acknowledgeEvents(let session, _):
            try own(session)
            return try request(r, ledger)
        case .listTasks(let session, let after, let limit):
            if !session.isEmpty { try own(session) }
            let n = AgentRequest.pageSize(limit)
            return .tasks(try ledger.tasks(sessions: session.isEmpty ? mine : [session], afterID: after, limit: n).map(shown))
        case .listSection(let session, let active, let offset, let limit):
            if !session.isEmpty { try own(session) }
            let n = AgentRequest.pageSize(limit)
            return .tasks(try ledger.taskSection(sessions: session.isEmpty ? mine : [session], active: active,
                                                 offset: offset, limit: n).map(shown))
        case .getTask(let id), .pause(let id), .resume(let id), .cancel(let id), .cancelProducingResumeData(let id),
             .answerChallenge(let id, _):
            try visible(id)
            return try request(r, ledger)
        case .removeTasks(let ids):
            for id in ids { try visible(id) }
            return try request(r, ledger)
        case .clearFinished(let session):
            return try each(session) { try request(.clearFinished(session: $0), ledger) }
        case .pauseAll(let session):
            return try each(session) { try request(.pauseAll(session: $0), ledger) }
        case .resumeAll(let session):
            return try each(session) { try request(.resumeAll(session: $0), ledger) }
        case .status:
            let counts = try ledger.countsByState(sessions: mine)
            return .status(counts: counts, running: counts[TaskState.running.rawValue] ?? 0, badge: 0)
        case .resetBadge:
            throw FerryError(.accessDenied, "the user.badge is the user's: a sandboxed app cannot reset it")
        case .sandboxed:
            throw FerryError(.accessDenied, "nested sandbox request")
        }
    }

    /// An app's priority orders its own tasks, never ahead of the user's: its 0…1 is kept as
    /// 0…0.5, so its highest ties with the user's default (the older task first).
    static func rankedBelowTheUser(_ draft: TaskRecord) -> TaskRecord {
        var r = draft
        r.priority = min(1, max(0, r.priority)) / 2
        return r
    }

    /// The sandboxed app a session belongs to (empty: the host's).
    public func app(ofSession session: String) -> String { sessions.app(session) }

    /// Within the app's limits with `new` more tasks (its sessions: `mine`).
    private func admitTasks(_ new: Int, _ app: SandboxedApp, _ mine: [String], _ ledger: AgentLedger) throws {
        let counts = try ledger.countsByState(sessions: mine)
        let ended: Set<String> = [TaskState.completed.rawValue, TaskState.failed.rawValue, TaskState.canceled.rawValue]
        let unfinished = counts.filter { !ended.contains($0.key) }.values.reduce(0, +)
        let unacknowledged = mine.reduce(0) { $0 + (sessions.queues[$1]?.count ?? 0) }
        try settings.appLimits.admitTasks(new, unfinished: unfinished, unacknowledged: unacknowledged, app: app.id)
    }
}
