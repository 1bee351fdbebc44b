/// The user changed a setting while the agent runs (GSettings, `ferry config`, Preferences):
/// it applies from now on, without a restart.
extension AgentCore {
    mutating func settingsChanged(_ new: Settings, _ ledger: AgentLedger) {
        let old = settings
        settings = new
        // More slots start queued tasks at once; fewer let running transfers finish (none is cut).
        tasks.scheduler.maxTotal = max(1, new.maxTotal)
        tasks.scheduler.maxPerHost = max(1, new.maxPerHost)
        if old.allowMetered && !new.allowMetered && world.network.metered {
            // Turned off on a metered network: what runs stops and waits, from its bytes.
            for id in tasks.attached.sorted() {
                _ = try? withMachine(id, ledger) { m, now in m.networkChanged(now: now) }
            }
        }
        if new.keepEnded != old.keepEnded {
            world.lastPrune = 0
            pruneEndedTasks(ledger)
        }
        wake(.schedule)
    }

    /// Whether the user lets transfers use the network as it is now.
    var networkAllowed: Bool { settings.allowMetered || !world.network.metered }
}
