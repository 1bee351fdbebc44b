import CGLib
import FerryCore
import Glibc
import Logging

/// Starts an app so that it can take its session's events (iOS relaunches the app and calls
/// handleEventsForBackgroundURLSession). The app finds its session identifier in
/// FERRY_BACKGROUND_SESSION. Exits are reported so that the agent can throttle relaunches.
enum Launcher {
    static let environmentKey = FerryRelease.backgroundSessionVariable

    private final class ExitBox {
        let body: (Int32) -> Void
        init(_ body: @escaping (Int32) -> Void) { self.body = body }
    }

    /// Launches `command` (argv, or one desktop entry id/path ending in ".desktop") and calls
    /// `exited` with the wait status when the process ends. Returns the pid.
    static func launch(_ command: [String], session: String, log: Logger, exited: @escaping (Int32) -> Void) throws -> Int32 {
        guard let first = command.first else { throw FerryError(.invalidArgument, "empty launch command") }
        let pid = command.count == 1 && first.hasSuffix(".desktop")
            ? try launchDesktopEntry(first, session: session, log: log)
            : try AppSpawner.spawn(command, environment: [environmentKey: session],
                                   workingDirectory: String(cString: g_get_home_dir()), reap: false, log: log)
        let box = Unmanaged.passRetained(ExitBox(exited)).toOpaque()
        g_child_watch_add_full(G_PRIORITY_DEFAULT, pid, { _, status, user in
            Unmanaged<ExitBox>.fromOpaque(user!).takeUnretainedValue().body(status)
        }, box, { user in Unmanaged<ExitBox>.fromOpaque(user!).release() })
        return pid
    }

    private final class PidBox { var pid: GPid = 0 }

    private static func launchDesktopEntry(_ entry: String, session: String, log: Logger) throws -> Int32 {
        let info = entry.hasPrefix("/") ? g_desktop_app_info_new_from_filename(entry) : g_desktop_app_info_new(entry)
        guard let info else { throw FerryError(.failed, "no desktop entry \(entry)") }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        let context = g_app_launch_context_new()
        defer { g_object_unref(UnsafeMutableRawPointer(context)) }
        g_app_launch_context_setenv(context, environmentKey, session)
        let box = PidBox()
        var error: UnsafeMutablePointer<GError>?
        let ok = g_desktop_app_info_launch_uris_as_manager(
            info, nil, context, GSpawnFlags(rawValue: G_SPAWN_SEARCH_PATH.rawValue | G_SPAWN_DO_NOT_REAP_CHILD.rawValue),
            AppSpawner.childSetup, nil, { _, pid, user in
                Unmanaged<PidBox>.fromOpaque(user!).takeUnretainedValue().pid = pid
            }, Unmanaged.passUnretained(box).toOpaque(), &error)
        guard ok != 0, box.pid > 0 else { throw failure("cannot launch \(entry)", error) }
        AppSpawner.moveToOwnScope(pid: box.pid, name: String(entry.dropLast(".desktop".count)), log: log)
        return box.pid
    }

    private static func failure(_ what: String, _ error: UnsafeMutablePointer<GError>?) -> FerryError {
        var e = error
        defer { g_clear_error(&e) }
        return FerryError(.failed, "\(what): \(error.map { String(cString: $0.pointee.message) } ?? "unknown error")")
    }
}
