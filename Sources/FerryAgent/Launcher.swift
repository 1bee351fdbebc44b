import CGLib
import FerryBus
import FerryCore
import Glibc
import Logging

/// Starts an app so that it can take its session's events (iOS relaunches the app and calls
/// handleEventsForBackgroundURLSession). The app finds its session identifier in
/// FERRY_BACKGROUND_SESSION. Exits are reported so that the agent can throttle relaunches.
enum Launcher {
    static let environmentKey = FerryRelease.backgroundSessionVariable

    /// Launches `command` (argv, or one desktop entry id/path ending in ".desktop") and calls
    /// `exited` with the wait status when the process ends. Returns the pid.
    static func launch(_ command: [String], session: String, log: Logger, exited: @escaping (Int32) -> Void) throws -> Int32 {
        guard let first = command.first else { throw FerryError(.invalidArgument, "empty launch command") }
        let pid = command.count == 1 && first.hasSuffix(".desktop")
            ? try launchDesktopEntry(first, session: session, log: log)
            : try AppSpawner.spawn(command, environment: [environmentKey: session],
                                   workingDirectory: String(cString: g_get_home_dir()), reap: false, log: log)
        g_child_watch_add_full(G_PRIORITY_DEFAULT, pid, { _, status, user in
            Box<(Int32) -> Void>.peek(user!)(status)
        }, Box.retained(exited), Box<(Int32) -> Void>.release)
        return pid
    }

    private static func launchDesktopEntry(_ entry: String, session: String, log: Logger) throws -> Int32 {
        let pid = try ProcessLauncher.launchDesktopEntry(entry, environment: [environmentKey: session])
        AppSpawner.moveToOwnScope(pid: pid, name: String(entry.dropLast(".desktop".count)), log: log)
        return pid
    }
}
