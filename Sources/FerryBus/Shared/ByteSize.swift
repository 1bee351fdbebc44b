import CGLib

/// Byte counts as people read them, the same in the CLI and the window: GLib's g_format_size
/// (SI units, as GNOME's file manager shows them: "0 bytes", "16.4 kB", "1.2 MB"); rates in
/// IEC units, as limits are set ("1.1 MiB/s").
public enum ByteSize {
    /// A rate as the desktop writes one, in powers of 1024 as the limits are set:
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
