/// One transfer's speed limit as a token bucket: bytes are taken from a credit that refills
/// at `rate` per second. A piece is taken while any credit is left (the debt is repaid by
/// waiting), so pieces of any size pass; when the credit is spent the transfer pauses until
/// 50 ms of credit have built up (at most 20 wake-ups a second), and bursts after a pause are
/// capped at a quarter second's worth. curl's own limit is no use here: from a fast server it
/// reads many buffers in one call before it looks at its limit.
public struct TokenBucket: Sendable, Equatable {
    /// Bytes per second (0: no limit).
    public private(set) var rate: Int64 = 0
    private var credit: Double = 0
    /// When the credit was last refilled (µs, monotonic).
    private var at: Int64 = 0
    /// The transfer is paused waiting for credit.
    public var paused = false

    public init() {}

    public mutating func setRate(_ rate: Int64, now: Int64) {
        refill(now)
        self.rate = max(0, rate)
        credit = min(credit, burst)
    }

    /// Takes `bytes` if there is credit; false: pause until `waitMilliseconds`.
    public mutating func take(_ bytes: Int, now: Int64) -> Bool {
        guard hasCredit(now: now) else { return false }
        spend(bytes)
        return true
    }

    /// Whether a piece may pass now (false: paused); `spend` then counts what it was.
    public mutating func hasCredit(now: Int64) -> Bool {
        guard rate > 0 else { return true }
        refill(now)
        if credit <= 0 { paused = true }
        return credit > 0
    }

    public mutating func spend(_ bytes: Int) { if rate > 0 { credit -= Double(bytes) } }

    /// How long until 50 ms of credit have built up again.
    public func waitMilliseconds(now: Int64) -> UInt32 {
        guard rate > 0 else { return 0 }
        let elapsed = Double(max(now - at, 0)) / 1_000_000
        let needed = Double(rate) * 0.05 - (credit + Double(rate) * elapsed)
        return needed <= 0 ? 0 : UInt32(min((needed / Double(rate) * 1_000).rounded(.up), 60_000))
    }

    private var burst: Double { Double(rate) / 4 }

    private mutating func refill(_ now: Int64) {
        if at > 0, rate > 0 { credit = min(credit + Double(rate) * Double(max(now - at, 0)) / 1_000_000, burst) }
        at = now
    }
}
