/// Which of a session's queued tasks may start now, given the network and power state
/// (iOS's allowsExpensiveNetworkAccess, isDiscretionary, httpMaximumConnectionsPerHost).
public struct SessionPolicy: Sendable, Equatable {
    public var allowMetered: Bool
    /// Wait for a cheap moment: an unmetered network and no power saving.
    public var discretionary: Bool
    /// Transfers of this session per host at once (0 = only the agent's limit).
    public var perHostLimit: Int

    public init(allowMetered: Bool = true, discretionary: Bool = false, perHostLimit: Int = 0) {
        self.allowMetered = allowMetered; self.discretionary = discretionary; self.perHostLimit = perHostLimit
    }

    public func mayStart(metered: Bool, powerSaver: Bool, runningForHost: Int) -> Bool {
        if metered && (!allowMetered || discretionary) { return false }
        if discretionary && powerSaver { return false }
        if perHostLimit > 0 && runningForHost >= perHostLimit { return false }
        return true
    }
}
