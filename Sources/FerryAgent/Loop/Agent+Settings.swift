import FerryCore

extension Agent {
    /// The user changed the settings while the agent runs (GSettings): popups at once, the
    /// connection limits for what starts next, the core's part in a turn of its own.
    public func apply(_ new: AgentSettings) {
        settings = new
        guard store != nil else {  // not started: the core has seen nothing yet
            core = AgentCore(settings: new.core)
            return
        }
        desktop.notifier.enabled = new.popups
        desktop.notifier.windowMilliseconds = new.popupWindowMilliseconds
        transfers.setLimits(total: new.core.maxTotal, host: new.core.maxPerHost)
        feed(.settingsChanged(new.core))
    }
}
