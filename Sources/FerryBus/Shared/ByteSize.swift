import CGLib

/// Byte counts as people read them, the same in the CLI and the window: GLib's g_format_size
/// (SI units, as GNOME's file manager shows them: "0 bytes", "16.4 kB", "1.2 MB"), and a
/// transfer's speed beside them in the same units ("1.4 MB of 60.0 MB · 158.8 kB/s": one system
/// a line); limits in IEC units, as they are set ("500.0 KiB/s").
public enum ByteSize {
    /// A transfer's speed, in the units of the sizes it is shown with: "158.8 kB/s".
    public static func speed(_ bytesPerSecond: Int64) -> String { text(bytesPerSecond) + "/s" }

    /// A limit as the desktop writes one, in powers of 1024 as the limits are set:
    /// "500.0 KiB/s", "2.0 MiB/s" (what `ferry config set` takes back).
    public static func rate(_ bytesPerSecond: Int64) -> String {
        guard let c = g_format_size_full(guint64(max(bytesPerSecond, 0)), G_FORMAT_SIZE_IEC_UNITS) else {
            return "\(bytesPerSecond) B/s"
        }
        defer { g_free(c) }
        return String(cString: c) + "/s"
    }

    public static func text(_ n: Int64) -> String {
        guard let c = g_format_size(guint64(max(n, 0))) else { return "\(n) bytes" }
        defer { g_free(c) }
        return String(cString: c)
    }
}
