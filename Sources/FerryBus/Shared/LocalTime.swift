import CGLib
import FerryCore
import Glibc

/// Times as the user's locale writes them, for the window and the command line alike (GLib's
/// formats from the C locale data: no ICU).
public enum LocalTime {
    /// The time as the user's locale writes its clock: "14:03", or "2:03 PM" where the
    /// locale's time has AM and PM (GLib's formats from the C locale data: no ICU here).
    public static func clock(_ microseconds: Int64) -> String {
        format(microseconds, twelveHour ? "%l:%M %p" : "%H:%M")
    }

    /// "today 14:03", or the date as the locale writes it and the time.
    public static func when(_ microseconds: Int64) -> String {
        let day = format(microseconds, "%Y-%m-%d")
        if day == format(Int64(time(nil)) * 1_000_000, "%Y-%m-%d") { return "today " + clock(microseconds) }
        return format(microseconds, "%x") + " " + clock(microseconds)
    }

    private static let twelveHour: Bool = {
        let f = String(cString: nl_langinfo(nl_item(T_FMT)))
        return f.contains("%r") || f.contains("%I") || f.contains("%l") || f.contains("%p")
    }()

    private static func format(_ microseconds: Int64, _ pattern: String) -> String {
        guard let t = g_date_time_new_from_unix_local(gint64(microseconds / 1_000_000)) else { return "" }
        defer { g_date_time_unref(t) }
        guard let text = g_date_time_format(t, pattern) else { return "" }
        defer { g_free(text) }
        return String(cString: text).trimmingSpaces
    }
}
