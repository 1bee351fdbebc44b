/// Capped exponential backoff with jitter, and the server's Retry-After when it asks for more.
public struct Backoff: Sendable, Equatable {
    public var baseMilliseconds: Int64
    public var capMilliseconds: Int64
    /// Jitter as a fraction of the delay: 0.2 spreads retries over ±20 %.
    public var jitter: Double

    public init(baseMilliseconds: Int64 = 1_000, capMilliseconds: Int64 = 300_000, jitter: Double = 0.2) {
        self.baseMilliseconds = baseMilliseconds; self.capMilliseconds = capMilliseconds; self.jitter = jitter
    }

    /// Delay before attempt number `attempt + 1` (attempt counts failures so far, from 1).
    /// `random` is a value in 0..<1 (injected so tests are deterministic).
    /// A Retry-After (seconds) wins when it asks for longer than the backoff, capped at one day.
    public func delayMilliseconds(attempt: Int, retryAfterSeconds: Int64? = nil, random: Double) -> Int64 {
        let exponent = min(max(attempt - 1, 0), 30)
        let raw = min(capMilliseconds, baseMilliseconds * (Int64(1) << Int64(exponent)))
        let spread = Double(raw) * jitter * (random * 2 - 1)
        var delay = max(0, Int64(Double(raw) + spread))
        if let retryAfterSeconds, retryAfterSeconds > 0 {
            delay = max(delay, min(retryAfterSeconds, 86_400) * 1_000)
        }
        return delay
    }
}
