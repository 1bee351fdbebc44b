/// A sandboxed app's requests: `SandboxPolicy` decides what the app may ask, by the request's
/// reach and its rules of its own; this runs what it grants, the app's session names made keys
/// (see `SessionKey`) and its reply in its names.
extension AgentCore {
    mutating func sandboxed<R: CoreRequest>(
        _ app: SandboxedApp, _ r: R, _ ctx: TaskContext
    ) throws -> (R.Reply, [AgentEffect]) {
        do {
            // The policy reads copies of the sessions and running tasks: it is gone before the
            // request runs, so no change then copies them.
            let keyed: R
            let grant: Grant
            do {
                let machines = tasks.machines
                let policy = SandboxPolicy(
                    app: app, sessions: sessions, limits: settings.appLimits, ledger: ctx.ledger,
                    liveSession: { machines[$0]?.record.session })
                let opening = if case .opening = r.reach { true } else { false }
                keyed = try r.keyed { try policy.key($0, opening: opening) }
                grant = try policy.grant(keyed.reach)
                try keyed.admit(policy)
            }
            let (reply, effects) = try keyed.run(&self, ctx, grant)
            return (R.named(reply, for: app.id), effects)
        } catch var e as FerryError {
            e.message = e.message.replacing(SessionKey.alias("", app: app.id), with: "")  // its names only
            throw e
        }
    }
}
