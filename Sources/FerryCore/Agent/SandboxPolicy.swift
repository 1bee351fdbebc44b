/// What a sandboxed app may ask: everything, but only about the sessions it opened and their
/// tasks. Another app's (or the host's) session is refused by name (AccessDenied); another's task
/// does not exist for it (NoSuchTask: its existence is not revealed); listings and counts with no
/// session cover its own sessions only. It cannot reset the user's badge, nor set a command for
/// the agent to run. (Paths are checked by the bus layer, which can resolve them on disk.)
///
/// A pure decision over a read of memory and the store: a `Grant`, or it throws; `AgentCore`
/// runs the request as granted.
public struct SandboxPolicy {
    let app: SandboxedApp
    let sessions: SessionBook
    let limits: AppLimits
    let ledger: AgentLedger
    /// A running task's session (memory knows tasks the store does not show yet).
    let liveSession: (Int64) -> String?

    /// The app's own sessions.
    var mine: [String] { sessions.configs.filter { $0.value.app.utf8.elementsEqual(app.id.utf8) }.keys.sorted() }

    /// The key of the app's session `name`: its alias where it has one, or is `opening` a name
    /// another owner has; else the name (another's is then refused by name, as before).
    func key(_ name: String, opening: Bool) throws -> String {
        let alias = SessionKey.alias(name, app: app.id)
        if try owner(alias) != nil { return alias }
        guard opening, let owner = try owner(name), !owner.utf8.elementsEqual(app.id.utf8) else { return name }
        return alias
    }

    /// What the app may do with a request of this reach (its session names already made keys,
    /// `key`): run it as asked, or over its own sessions; or it throws. Every reach is named.
    func grant(_ reach: RequestReach) throws -> Grant {
        switch reach {
        case .opening:
            return Grant(app: app)  // its namespace: OpenSession's rule of its own (`mayOpen`)
        case .making(let session, let count):
            try mayCreate(in: session, count)
            return Grant(app: app)
        case .session(let session):
            try own(session)
            return Grant(app: app)
        case .page(let session, _), .sessions(let session):
            return Grant(app: app, sessions: try ownOrMine(session))
        case .tasks(let ids):
            for id in ids { try visible(id) }
            return Grant(app: app)
        case .agent:
            return Grant(app: app, sessions: mine)
        case .userOnly(let why):
            throw FerryError(.accessDenied, why)
        }
    }

    /// OpenSession of an app: its own names only, no command to run, within its limits.
    func mayOpen(_ id: String, _ options: SessionOptions) throws {
        if options.launchCommand != nil {
            throw FerryError(
                .accessDenied,
                "launch-command refused: \(app.id) is sandboxed, so the agent relaunches it only as itself")
        }
        // Session ids are global: an app names its own only, so it can never take the user's
        // (dev.ferry.cli) or another app's before they open theirs.
        // Compared as bytes, and ASCII as app ids are: no Unicode-equivalent look-alikes.
        let name = SessionKey.name(of: id, app: app.id)
        guard name.utf8.allSatisfy({ $0 < 128 }),
            name.utf8.elementsEqual(app.id.utf8) || name.utf8.starts(with: (app.id + ".").utf8)
        else {
            throw FerryError(
                .accessDenied,
                "session '\(name.prefix(64))' refused: \(app.id) is sandboxed, so its session identifiers are "
                    + "'\(app.id)' or begin with '\(app.id).' (ASCII)"
            )
        }
        try own(id)
        if sessions.configs[id] == nil { try limits.admitSession(open: mine.count, app: app.id) }
    }

    /// Resume data names the task whose kept bytes it continues: only the app's own.
    func mayContinue(_ data: ResumeData) throws {
        guard data.signedByAgent else {
            throw FerryError(
                .invalidResumeData,
                "the resume data is not signed by this agent (an app may only continue from resume data the agent "
                    + "gave out)"
            )
        }
        do { try visible(data.task) } catch {
            throw FerryError(.invalidResumeData, "the resume data is not of one of \(app.id)'s tasks")
        }
    }

    /// An app's priority orders its own tasks, never ahead of the user's: its 0…1 is kept as
    /// 0…0.5, so its highest ties with the user's default (the older task first).
    static func rankedBelowTheUser(_ draft: TaskRecord) -> TaskRecord {
        var r = draft
        r.priority = min(1, max(0, r.priority)) / 2
        return r
    }

    private func owner(_ session: String) throws -> String? {
        try sessions.configs[session]?.app ?? ledger.session(session)?.app
    }

    private func own(_ session: String) throws {
        guard let owner = try owner(session) else { return }  // NoSuchSession follows
        guard owner.utf8.elementsEqual(app.id.utf8) else {
            throw FerryError(
                .accessDenied,
                "session '\(session)' belongs to another app; \(app.id) can use only the sessions it opened")
        }
    }

    /// The session named, when the app's; all of its sessions for "".
    private func ownOrMine(_ session: String) throws -> [String] {
        if session.isEmpty { return mine }
        try own(session)
        return [session]
    }

    private func visible(_ id: Int64) throws {
        let session = try liveSession(id) ?? ledger.task(id)?.session
        guard let session, let owner = try owner(session), owner.utf8.elementsEqual(app.id.utf8) else {
            throw FerryError(.noSuchTask, "no task \(id)")
        }
    }

    /// New tasks in the app's session: it has the network, and they keep it within its limits.
    private func mayCreate(in session: String, _ new: Int) throws {
        // Talking to the agent must not give an app the network its sandbox does not have.
        guard app.network else {
            throw FerryError(
                .accessDenied,
                "\(app.id) has no network permission (Flatpak: --share=network), so the agent fetches nothing for it")
        }
        try own(session)
        let mine = mine
        let counts = try ledger.countsByState(sessions: mine)
        let ended: Set<String> = [TaskState.completed.rawValue, TaskState.failed.rawValue, TaskState.canceled.rawValue]
        let unfinished = counts.filter { !ended.contains($0.key) }.values.reduce(0, +)
        let unacknowledged = mine.reduce(0) { $0 + (sessions.queues[$1]?.count ?? 0) }
        try limits.admitTasks(new, unfinished: unfinished, unacknowledged: unacknowledged, app: app.id)
    }
}
