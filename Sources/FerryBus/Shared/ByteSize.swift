import CGLib

/// Byte counts as people read them, the same in the CLI and the window: GLib's g_format_size
/// (SI units, as GNOME's file manager shows them: "0 bytes", "16.4 kB", "1.2 MB").
public enum ByteSize {
    public static func text(_ n: Int64) -> String {
        guard let c = g_format_size(guint64(max(n, 0))) else { return "\(n) bytes" }
        defer { g_free(c) }
        return String(cString: c)
    }
}
