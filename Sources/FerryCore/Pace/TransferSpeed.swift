/// A transfer's speed as people watch it: bytes per second, smoothed over the last samples
/// (a moving average, so one slow second does not make "time left" jump), and the time left.
/// One for the window's rows and the CLI's progress bar.
public struct TransferSpeed: Sendable {
    private var last: (received: Int64, at: Int64)?
    /// Bytes per second (nil: not known yet).
    public private(set) var bytesPerSecond: Double?

    public init() {}

    /// A new figure: `received` bytes at `at` (µs, monotonic).
    public mutating func sample(received: Int64, at: Int64) {
        defer { last = (received, at) }
        guard let last, at > last.at, received >= last.received else { return }
        let recent = Double(received - last.received) / (Double(at - last.at) / 1_000_000)
        bytesPerSecond = bytesPerSecond.map { 0.6 * $0 + 0.4 * recent } ?? recent
    }

    /// Seconds until `expected` at this speed (nil: unknown).
    public func secondsLeft(received: Int64, expected: Int64?) -> Double? {
        guard let expected, expected > received, let speed = bytesPerSecond, speed > 0 else { return nil }
        return Double(expected - received) / speed
    }

    /// "6 s", "4 min", "2 h 5 min".
    public static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        return "\(s / 3600) h \(s % 3600 / 60) min"
    }
}
