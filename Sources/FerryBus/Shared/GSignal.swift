import CGLib

/// Connecting a Swift closure to a GObject signal. The closure travels in a retained `Box` that
/// GLib releases when the handler goes (disconnected, or the instance finalized), so a callback
/// never reaches freed memory whatever the order things end in; a closure that must not keep
/// its object alive captures it weakly.
public enum GSignal {
    private static let release: GClosureNotify = { data, _ in
        if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
    }

    /// A signal whose handler takes only the emitting instance ("mounts-changed", "clicked").
    @discardableResult
    public static func connect(
        _ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping () -> Void
    ) -> gulong {
        let c: @convention(c) (gpointer?, gpointer?) -> Void = { _, user in Box<() -> Void>.peek(user!)() }
        return g_signal_connect_data(
            instance, signal, unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release,
            GConnectFlags(0))
    }

    /// A signal with one pointer argument: "notify::PROPERTY" (the GParamSpec), GSettings'
    /// "changed" (the key), a list factory's "setup" and "bind" (the item).
    @discardableResult
    public static func connect(
        _ instance: UnsafeMutableRawPointer, _ signal: String,
        _ handler: @escaping (UnsafeMutableRawPointer?) -> Void
    ) -> gulong {
        let c: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, arg, user in
            Box<(UnsafeMutableRawPointer?) -> Void>.peek(user!)(arg)
        }
        return g_signal_connect_data(
            instance, signal, unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release,
            GConnectFlags(0))
    }

    /// A signal with one gboolean argument ("network-changed").
    @discardableResult
    public static func connect(
        _ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping (Bool) -> Void
    ) -> gulong {
        let c: @convention(c) (gpointer?, gboolean, gpointer?) -> Void = { _, flag, user in
            Box<(Bool) -> Void>.peek(user!)(flag != 0)
        }
        return g_signal_connect_data(
            instance, signal, unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release,
            GConnectFlags(0))
    }
}
