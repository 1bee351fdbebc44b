import CGLib
import FerryCore
import Glibc

/// The one way Ferry starts programs (the agent from the CLI, relaunched apps and xdg-open from
/// the agent, xdg-open from the CLI): GLib's spawn, stdin from /dev/null, no descriptor of ours
/// inherited (a caller's pipe would never see EOF), and in a session of its own (setsid) so a
/// signal to our process group or a terminal hang-up does not reach it.
public enum ProcessLauncher {
    /// Runs in the child between fork and exec.
    public static let childSetup: GSpawnChildSetupFunc = { _ in _ = setsid() }

    /// Starts `argv` (searched in PATH). `output`: append stdout and stderr to this file (0600).
    /// With `watch` the caller reaps the child (g_child_watch_add); otherwise GLib does.
    public static func spawn(
        _ argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil,
        output: String? = nil, watch: Bool = false
    ) throws -> Int32 {
        var env = g_get_environ()
        for (k, v) in environment { env = g_environ_setenv(env, k, v, 1) }
        defer { g_strfreev(env) }
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        let out = output.map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) } ?? -1
        defer { if out >= 0 { close(out) } }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        var pid: GPid = 0
        var error: UnsafeMutablePointer<GError>?
        var flags = G_SPAWN_SEARCH_PATH.rawValue
        if watch { flags |= G_SPAWN_DO_NOT_REAP_CHILD.rawValue }
        guard
            g_spawn_async_with_fds(
                workingDirectory, &cargs, env, GSpawnFlags(rawValue: flags), childSetup, nil, &pid,
                null, out, out, &error) != 0
        else {
            throw failure("cannot start \(argv.first ?? "?")", error)
        }
        return pid
    }

    /// Runs `argv` and waits for it: its exit status (0 = success).
    public static func run(_ argv: [String]) throws -> Int32 {
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var status: Int32 = 0
        var error: UnsafeMutablePointer<GError>?
        let flags = G_SPAWN_SEARCH_PATH.rawValue | G_SPAWN_STDIN_FROM_DEV_NULL.rawValue
        guard
            g_spawn_sync(nil, &cargs, nil, GSpawnFlags(rawValue: flags), childSetup, nil, nil, nil, &status, &error)
                != 0
        else {
            throw failure("cannot start \(argv.first ?? "?")", error)
        }
        return (status >> 8) & 0xff
    }

    /// Starts a desktop entry (an id like "org.example.App.desktop", or a path) through GIO, as
    /// desktops do; the caller reaps it. Returns its pid.
    public static func launchDesktopEntry(_ entry: String, environment: [String: String]) throws -> Int32 {
        let info = entry.hasPrefix("/") ? g_desktop_app_info_new_from_filename(entry) : g_desktop_app_info_new(entry)
        guard let info else { throw FerryError(.failed, "no desktop entry \(entry)") }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        let context = g_app_launch_context_new()
        defer { g_object_unref(UnsafeMutableRawPointer(context)) }
        for (k, v) in environment { g_app_launch_context_setenv(context, k, v) }
        let pid = Box<GPid>(0)
        var error: UnsafeMutablePointer<GError>?
        let ok = g_desktop_app_info_launch_uris_as_manager(
            info, nil, context,
            GSpawnFlags(rawValue: G_SPAWN_SEARCH_PATH.rawValue | G_SPAWN_DO_NOT_REAP_CHILD.rawValue),
            childSetup, nil,
            { _, launched, user in
                Unmanaged<Box<GPid>>.fromOpaque(user!).takeUnretainedValue().value = launched
            }, Box.unretained(pid), &error)
        guard ok != 0, pid.value > 0 else { throw failure("cannot launch \(entry)", error) }
        return pid.value
    }

    public static func failure(_ what: String, _ error: UnsafeMutablePointer<GError>?) -> FerryError {
        var e = error
        defer { g_clear_error(&e) }
        return FerryError(.failed, "\(what): \(error.map { String(cString: $0.pointee.message) } ?? "unknown error")")
    }
}
