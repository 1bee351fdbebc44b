import FerryCore
import Glibc

/// `--start-at`: when a task may begin, as people write it: Unix seconds ("1764115200"), ISO 8601
/// with a zone ("2026-11-25T23:00:00Z", "…+01:00", "…T23:00:00.5Z"), or the local time
/// ("2026-11-25T23:00", "2026-11-25 23:00", or only "23:00": today, or tomorrow when that has
/// passed). The C library's calendar (timegm, mktime with the local zone): no ICU for this.
enum StartTime {
    /// Microseconds since the epoch, or nil when `text` is none of the above.
    static func parse(_ text: String, now: time_t = time(nil)) -> Int64? {
        let t = text.trimmingSpaces
        if let seconds = Int64(t), seconds >= 0 { return seconds * 1_000_000 }
        var rest = Substring(t)
        if let date = takeDate(&rest) {
            guard let sep = rest.first, sep == "T" || sep == " " else { return nil }
            rest = rest.dropFirst()
            guard var tm = takeClock(&rest, date: date) else { return nil }
            let fraction = takeFraction(&rest)
            if rest.isEmpty {  // no zone: the local time
                tm.tm_isdst = -1
                let s = mktime(&tm)
                return s == -1 ? nil : Int64(s) * 1_000_000 + fraction
            }
            guard sep == "T", let offset = takeZone(&rest), rest.isEmpty else { return nil }
            let s = timegm(&tm)
            return s == -1 ? nil : (Int64(s) - offset) * 1_000_000 + fraction
        }
        // Only a clock time: the next time the local clock shows it.
        var now = now, today = tm()
        localtime_r(&now, &today)
        guard var tm = takeClock(&rest, date: (Int(today.tm_year) + 1900, Int(today.tm_mon) + 1, Int(today.tm_mday))),
            rest.isEmpty
        else { return nil }
        tm.tm_isdst = -1
        var s = mktime(&tm)
        if s <= now {
            tm.tm_mday += 1
            tm.tm_isdst = -1
            s = mktime(&tm)
        }
        return s == -1 ? nil : Int64(s) * 1_000_000
    }

    /// "2026-11-25": year, month, day.
    private static func takeDate(_ s: inout Substring) -> (Int, Int, Int)? {
        var copy = s
        guard let y = takeNumber(&copy, digits: 4), copy.popFirst() == "-", let m = takeNumber(&copy, digits: 2),
            copy.popFirst() == "-", let d = takeNumber(&copy, digits: 2),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        s = copy
        return (y, m, d)
    }

    /// "23:00" or "23:00:59" on the given day.
    private static func takeClock(_ s: inout Substring, date: (Int, Int, Int)) -> tm? {
        guard let h = takeNumber(&s, digits: 2), s.popFirst() == ":", let m = takeNumber(&s, digits: 2),
            h < 24, m < 60
        else { return nil }
        var sec = 0
        if s.first == ":" {
            s = s.dropFirst()
            guard let v = takeNumber(&s, digits: 2), v < 61 else { return nil }
            sec = v
        }
        var tm = tm()
        tm.tm_year = Int32(date.0 - 1900); tm.tm_mon = Int32(date.1 - 1); tm.tm_mday = Int32(date.2)
        tm.tm_hour = Int32(h); tm.tm_min = Int32(m); tm.tm_sec = Int32(sec)
        return tm
    }

    /// ".5" or ",250": microseconds (digits past the sixth ignored).
    private static func takeFraction(_ s: inout Substring) -> Int64 {
        guard s.first == "." || s.first == "," else { return 0 }
        s = s.dropFirst()
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        s = s.dropFirst(digits.count)
        let six = (digits.prefix(6) + String(repeating: "0", count: max(0, 6 - digits.count)))
        return Int64(six) ?? 0
    }

    /// "Z", "+01:00", "-0530": seconds east of UTC.
    private static func takeZone(_ s: inout Substring) -> Int64? {
        guard let sign = s.popFirst() else { return nil }
        if sign == "Z" || sign == "z" { return 0 }
        guard sign == "+" || sign == "-", let h = takeNumber(&s, digits: 2) else { return nil }
        if s.first == ":" { s = s.dropFirst() }
        guard let m = takeNumber(&s, digits: 2), h < 24, m < 60 else { return nil }
        return Int64(sign == "-" ? -1 : 1) * Int64(h * 3600 + m * 60)
    }

    private static func takeNumber(_ s: inout Substring, digits: Int) -> Int? {
        let p = s.prefix(digits)
        guard p.count == digits, p.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        s = s.dropFirst(digits)
        return Int(p)
    }
}
