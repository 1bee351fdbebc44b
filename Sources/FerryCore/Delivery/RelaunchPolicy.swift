/// When the agent may start an app again to deliver its session's events
/// (iOS's relaunch for handleEventsForBackgroundURLSession), without a relaunch storm
/// when the app crashes at start-up. Pure: time comes in as an argument (µs).
public struct RelaunchPolicy: Sendable, Equatable {
    /// Launches in a row that ended without the app saying it finished handling events.
    public private(set) var failedLaunches = 0
    /// The launched process is still running.
    public private(set) var running = false
    /// No launch before this time.
    public private(set) var notBefore: Int64 = 0
    private var handledSinceLaunch = false
    public var backoff: Backoff

    public init(backoff: Backoff = Backoff(baseMilliseconds: 2_000, capMilliseconds: 1_800_000, jitter: 0)) {
        self.backoff = backoff
    }

    public enum Decision: Sendable, Equatable {
        case launch
        /// Ask again at this time (a timer).
        case wait(until: Int64)
        /// Nothing to do (a client is connected, the app is running, or nothing is pending).
        case none
    }

    /// Should the app be started now?
    public func decide(pendingEvents: Bool, clientConnected: Bool, now: Int64) -> Decision {
        guard pendingEvents, !clientConnected, !running else { return .none }
        return now >= notBefore ? .launch : .wait(until: notBefore)
    }

    public mutating func launched(now: Int64) {
        running = true
        handledSinceLaunch = false
    }

    /// The launched process exited. If it neither said it finished handling its events nor
    /// left the queue empty, it is counted as a failed launch and the next one waits longer
    /// (2 s, 4 s, 8 s … up to 30 min).
    public mutating func exited(now: Int64, pendingEvents: Bool) {
        running = false
        if handledSinceLaunch || !pendingEvents {
            failedLaunches = 0
            notBefore = now
        } else {
            failedLaunches += 1
            notBefore = now + backoff.delayMilliseconds(attempt: failedLaunches, random: 0.5) * 1_000
        }
    }

    /// The app said it handled its events (FinishedHandlingEvents): it works, forget past failures.
    public mutating func finishedEvents(now: Int64) {
        handledSinceLaunch = true
        failedLaunches = 0
        notBefore = now
    }

    /// For `ferry show` and the logs.
    public func describe(now: Int64) -> String? {
        if running { return "app launched for events, running" }
        guard failedLaunches > 0 else { return nil }
        let wait = max(0, (notBefore - now) / 1_000_000)
        return
            "app exited \(failedLaunches) time(s) without handling its events; next launch in \(wait) s at the earliest"
    }
}
