/// A sandboxed app's requests: `SandboxPolicy` decides what the app may ask; this carries its
/// decision out, the app's session names made keys (see `SessionKey`) and its reply in its names.
extension AgentCore {
    mutating func sandboxedRequest(_ app: SandboxedApp, _ r: AgentRequest, _ ledger: AgentLedger) throws -> AgentReply {
        do {
            return try carryOut(decide(r, of: app, ledger), of: app, ledger).named(for: app.id)
        } catch var e as FerryError {
            e.message = e.message.replacing(SessionKey.alias("", app: app.id), with: "")  // its names only
            throw e
        }
    }

    /// The policy's decision. The policy reads copies of the sessions and running tasks: it is
    /// gone before the decision is carried out, so no change then copies them.
    private func decide(_ r: AgentRequest, of app: SandboxedApp, _ ledger: AgentLedger) throws -> SandboxPolicy.Decision
    {
        let machines = tasks.machines
        let policy = SandboxPolicy(
            app: app, sessions: sessions, limits: settings.appLimits, ledger: ledger,
            liveSession: { machines[$0]?.record.session })
        let opening = if case .openSession = r { true } else { false }
        return try policy.decide(r.withSession { try policy.key($0, opening: opening) })
    }

    private mutating func carryOut(
        _ decision: SandboxPolicy.Decision, of app: SandboxedApp, _ ledger: AgentLedger
    ) throws -> AgentReply {
        switch decision {
        case .run(let r):
            return try request(r, ledger)
        case .open(let id, let options, let peer):
            return try openSession(id, options, peer: peer, app: app, ledger)
        case .eachOfItsSessions(let requests):
            var total = 0
            for r in requests { if case .count(let n) = try request(r, ledger) { total += n } }
            return .count(total)
        case .list(let sessions, let after, let limit):
            return .tasks(
                try ledger.tasks(sessions: sessions, afterID: after, limit: AgentRequest.pageSize(limit)).map(shown))
        case .section(let sessions, let active, let offset, let limit):
            return .tasks(
                try ledger.taskSection(
                    sessions: sessions, active: active, offset: offset,
                    limit: AgentRequest.pageSize(limit)
                ).map(shown))
        case .status(let sessions):
            let counts = try ledger.countsByState(sessions: sessions)
            return .status(counts: counts, running: counts[TaskState.running.rawValue] ?? 0, badge: 0)
        }
    }

    /// The sandboxed app a session belongs to (empty: the host's).
    public func app(ofSession session: String) -> String { sessions.app(session) }
}
