import CGLib
import FerryBus
import FerryCore
import Glibc
import Logging

/// The one way the agent starts the user's programs (relaunched apps, xdg-open): outside the
/// agent. Each starts in a session of its own (setsid), so a signal to ferryd's process group
/// or a terminal hang-up does not reach it, and, when a systemd user manager runs, in a
/// transient scope of its own (`app-ferry-NAME-PID.scope`, as desktops do for the apps they
/// launch), so `systemctl --user restart ferryd` does not kill the user's PDF viewer.
enum AppSpawner {
    /// Starts `argv` (ProcessLauncher) and moves it to a scope of its own; with `reap` false
    /// the caller watches the child (g_child_watch_add).
    static func spawn(
        _ argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil,
        reap: Bool = true, log: Logger
    ) throws -> GPid {
        let pid = try ProcessLauncher.spawn(
            argv, environment: environment, workingDirectory: workingDirectory, watch: !reap)
        moveToOwnScope(pid: pid, name: argv.first ?? "app", log: log)
        return pid
    }

    /// Asks systemd (asynchronously; nothing waits) to put `pid` in a scope of its own.
    /// Without a systemd user manager on the bus the call fails quietly: setsid is all there is.
    static func moveToOwnScope(pid: GPid, name: String, log: Logger) {
        guard pid > 0, let bus = sessionBus else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        let unit = "app-ferry-\(unitNamePart(name))-\(pid).scope"
        let text =
            "('\(unit)', 'fail', [('PIDs', <[uint32 \(pid)]>), ('CollectMode', <'inactive-or-failed'>)], @a(sa(sv)) [])"
        guard let args = g_variant_parse(nil, text, nil, nil, nil) else { return }
        g_dbus_connection_call(
            bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager", "StartTransientUnit", args, nil,
            G_DBUS_CALL_FLAGS_NO_AUTO_START, 5_000, nil,
            { source, result, _ in
                var error: UnsafeMutablePointer<GError>?
                if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                    g_variant_unref(reply)
                }
                g_clear_error(&error)
            }, nil)
        log.debug("asked systemd for \(unit)")
    }

    /// GIO's connection to the session bus (cached by GIO); the caller unrefs it. The agent's
    /// API is on sd-bus (`BusConnection`); relaunching apps, scopes and the file manager go
    /// through GIO, and libnotify uses the same connection.
    static var sessionBus: OpaquePointer? { g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) }

    /// Connects GIO's session bus connection without waiting, once the agent runs, so that
    /// `sessionBus` never connects on the loop. It does not end the agent when the bus closes
    /// (the agent's own connection tells it, and it saves its state first).
    static func warmSessionBus() {
        g_bus_get(
            G_BUS_TYPE_SESSION, nil,
            { _, result, _ in
                guard let bus = g_bus_get_finish(result, nil) else { return }
                g_dbus_connection_set_exit_on_close(bus, 0)  // kept: GIO's one connection, for the agent's lifetime
            }, nil)
    }

    /// "/usr/bin/xdg-open" → "xdg_open": ASCII letters, digits and _ only (no unit-name escaping needed).
    static func unitNamePart(_ path: String) -> String {
        let base = path.split(separator: "/").last.map(String.init) ?? "app"
        let cleaned = String(
            base.unicodeScalars.prefix(64).map { s -> Character in
                s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s)) ? Character(s) : "_"
            })
        return cleaned.isEmpty ? "app" : cleaned
    }
}
