import CCurl
import CFerryShim
import CGLib
import FerryCore

/// The mechanism of the speed limits (the core shares them: `SpeedLimits`): a transfer whose
/// token bucket ran dry pauses, and goes on once it has credit again, on a timer of its own.
final class SpeedLimitWaits {
    /// Goes on with a transfer paused for its limit (its carrier unpauses curl).
    var resume: (Transfer) -> Void = { _ in }
    /// The context of the transfers' thread, where the timers run.
    private let context: OpaquePointer
    init(context: OpaquePointer) { self.context = context }
    /// Transfers paused for their limit, and the timer that lets each go on.
    private var waits: [Int64: UInt32] = [:]

    /// A transfer spent its credit and paused: it goes on once it has some again.
    func paused(_ t: Transfer) {
        if let old = waits.removeValue(forKey: t.taskID) { ContextSource.remove(old, in: context) }
        let wait = t.pace.bucket.waitMilliseconds(now: Transfer.now)
        waits[t.taskID] = ContextSource.timer(in: context, milliseconds: wait) { [weak self] in
            self?.waits[t.taskID] = nil
            self?.resume(t)
            return false
        }
    }
}

extension Transfer {
    /// The monotonic clock, µs (the speed limit's).
    static var now: Int64 { Int64(g_get_monotonic_time()) }

    /// This transfer's speed limit, bytes per second (0: none).
    func limitSpeed(to bytesPerSecond: Int64) { pace.bucket.setRate(bytesPerSecond, now: Transfer.now) }
}
