import Foundation

/// `--start-at`: when a task may begin, as people write it: Unix seconds ("1764115200"), ISO 8601
/// with a zone ("2026-11-25T23:00:00Z", "…+01:00"), or the local time ("2026-11-25T23:00",
/// "2026-11-25 23:00", or only "23:00": today, or tomorrow when that has passed).
enum StartTime {
    /// Microseconds since the epoch, or nil when `text` is none of the above.
    static func parse(_ text: String, now: Date = Date()) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(t), seconds >= 0 { return seconds * 1_000_000 }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime]
        if let d = iso.date(from: t) { return micros(d) }
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = iso.date(from: t) { return micros(d) }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = .current
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm"] {
            local.dateFormat = format
            if let d = local.date(from: t) { return micros(d) }
        }
        for format in ["HH:mm:ss", "HH:mm"] {
            local.dateFormat = format
            guard let clock = local.date(from: t) else { continue }
            let c = Calendar.current.dateComponents([.hour, .minute, .second], from: clock)
            guard var d = Calendar.current.date(bySettingHour: c.hour!, minute: c.minute!, second: c.second ?? 0, of: now) else { return nil }
            if d <= now { d = Calendar.current.date(byAdding: .day, value: 1, to: d)! }
            return micros(d)
        }
        return nil
    }

    private static func micros(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1_000_000).rounded()) }
}
