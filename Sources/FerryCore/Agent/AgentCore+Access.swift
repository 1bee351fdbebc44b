/// A sandboxed app's requests: `SandboxPolicy` decides what the app may ask; this carries its
/// decision out, the app's session names made keys (see `SessionKey`) and its reply in its names.
extension AgentCore {
    mutating func sandboxed(_ app: SandboxedApp, _ r: AgentRequest, _ ctx: TaskContext) throws -> Answer {
        do {
            // The policy reads copies of the sessions and running tasks: it is gone before the
            // decision is carried out, so no change then copies them.
            let decision: SandboxPolicy.Decision
            do {
                let machines = tasks.machines
                let policy = SandboxPolicy(
                    app: app, sessions: sessions, limits: settings.appLimits, ledger: ctx.ledger,
                    liveSession: { machines[$0]?.record.session })
                let opening = if case .openSession = r { true } else { false }
                decision = try policy.decide(r.withSession { try policy.key($0, opening: opening) })
            }
            let answer: Answer
            switch decision {
            case .run(let r):
                answer = try request(r, ctx)
            case .open(let id, let options, let peer):
                let (reply, effects) = try sessions.open(
                    id, options, peer: peer, app: app, settings: settings, ctx.ledger)
                answer = (reply, armed(consume effects))
            case .eachOfItsSessions(let requests):
                var total = 0, effects: [AgentEffect] = []
                for r in requests {
                    let (reply, more) = try request(r, ctx)
                    if case .count(let n) = reply { total += n }
                    effects += more
                }
                answer = (.count(total), effects)
            case .list(let sessions, let after, let limit):
                let page = try ctx.ledger.tasks(sessions: sessions, afterID: after, limit: AgentRequest.pageSize(limit))
                answer = (.tasks(page.map(tasks.shown)), [])
            case .section(let sessions, let active, let offset, let limit):
                let page = try ctx.ledger.taskSection(
                    sessions: sessions, active: active, offset: offset, limit: AgentRequest.pageSize(limit))
                answer = (.tasks(page.map(tasks.shown)), [])
            case .status(let sessions):
                let counts = try ctx.ledger.countsByState(sessions: sessions)
                answer = (.status(counts: counts, running: counts[TaskState.running.rawValue] ?? 0, badge: 0), [])
            }
            return (answer.reply.named(for: app.id), answer.effects)
        } catch var e as FerryError {
            e.message = e.message.replacing(SessionKey.alias("", app: app.id), with: "")  // its names only
            throw e
        }
    }
}
