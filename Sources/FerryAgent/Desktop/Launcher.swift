import CGLib
import FerryBus
import FerryCore
import Glibc
import Logging

/// Starts an app so that it can take its session's events (iOS relaunches the app and calls
/// handleEventsForBackgroundURLSession). The app finds its session identifier in
/// FERRY_BACKGROUND_SESSION, or, D-Bus activated, as the parameter of its
/// `ferry-background-events` action. What happens is reported so that the agent can throttle
/// relaunches.
enum Launcher {
    static let environmentKey = FerryRelease.backgroundSessionVariable
    /// The org.freedesktop.Application action a DBusActivatable app is activated with.
    static let action = "ferry-background-events"

    enum Report {
        /// Running (pid 0: activated over D-Bus, no process of ours).
        case started(pid: Int32)
        case failed(String)
        /// The process ended (its wait status), or the activated app left the bus (0).
        case exited(status: Int32)
    }

    static func launch(_ target: LaunchTarget, session: String, log: Logger, report: @escaping (Report) -> Void) {
        do {
            switch target {
            case .command(let argv):
                guard let first = argv.first else { throw FerryError(.invalidArgument, "empty launch command") }
                let pid =
                    argv.count == 1 && first.hasSuffix(".desktop")
                    ? try launchDesktopEntry(first, session: session, log: log)
                    : try AppSpawner.spawn(
                        argv, environment: [environmentKey: session],
                        workingDirectory: String(cString: g_get_home_dir()), reap: false, log: log)
                watch(pid, report)
            case .app(let id, let kind):
                let session = SessionKey.name(of: session, app: id)  // the app's own name for it
                if kind == .flatpak, isDBusActivatable(id) {
                    activate(id, session: session, log: log, report: report)
                    return
                }
                // `flatpak run` starts the app in its sandbox with the variable set inside.
                let argv =
                    kind == .flatpak
                    ? ["flatpak", "run", "--env=\(environmentKey)=\(session)", id] : ["snap", "run", id]
                let pid = try AppSpawner.spawn(
                    argv, environment: [environmentKey: session],
                    workingDirectory: String(cString: g_get_home_dir()), reap: false, log: log)
                watch(pid, report)
            }
        } catch {
            report(.failed("\(error)"))
        }
    }

    private static func watch(_ pid: Int32, _ report: @escaping (Report) -> Void) {
        report(.started(pid: pid))
        g_child_watch_add_full(
            G_PRIORITY_DEFAULT, pid,
            { _, status, user in
                Box<(Report) -> Void>.peek(user!)(.exited(status: status))
            }, Box.retained(report), Box<(Report) -> Void>.release)
    }

    private static func launchDesktopEntry(_ entry: String, session: String, log: Logger) throws -> Int32 {
        let pid = try ProcessLauncher.launchDesktopEntry(entry, environment: [environmentKey: session])
        AppSpawner.moveToOwnScope(pid: pid, name: String(entry.dropLast(".desktop".count)), log: log)
        return pid
    }

    /// Flatpak exports an app's desktop entry into the XDG data folders under its id.
    /// (A small local file, read through GIO's cache of the applications folders.)
    static func isDBusActivatable(_ id: String) -> Bool {
        guard let info = g_desktop_app_info_new(id + ".desktop") else { return false }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        return g_desktop_app_info_get_boolean(info, "DBusActivatable") != 0
    }

    /// `org.freedesktop.Application.ActivateAction("ferry-background-events", [<session>], {})`
    /// on the app's well-known name: the bus starts the app (in its sandbox) if it is not
    /// running. It counts as running until its name leaves the bus.
    private static func activate(_ id: String, session: String, log: Logger, report: @escaping (Report) -> Void) {
        guard let bus = AppSpawner.sessionBus else { report(.failed("no session bus")); return }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        let path = "/" + id.replacing(".", with: "/").replacing("-", with: "_")
        let args = activateActionArguments(session)
        let pending = ActivationPending(id: id, report: report)
        g_dbus_connection_call(
            bus, id, path, "org.freedesktop.Application", "ActivateAction", args, nil,
            GDBusCallFlags(rawValue: 0) /* NONE: the bus starts the app */, 25_000, nil,
            { source, result, user in
                let pending = Box<ActivationPending>.take(user!)
                var error: UnsafeMutablePointer<GError>?
                if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                    g_variant_unref(reply)
                    pending.report(.started(pid: 0))
                    pending.watchName(on: OpaquePointer(source)!)
                } else {
                    pending.report(.failed(ProcessLauncher.failure("activating \(pending.id)", error).message))
                }
            }, Box.retained(pending))
        log.debug("activating \(id) for session \(session)")
    }

    /// (s action, av parameter, a{sv} platform-data): the one `av` the Value type does not spell.
    private static func activateActionArguments(_ session: String) -> OpaquePointer {
        let variantType = g_variant_type_new("v")
        defer { g_variant_type_free(variantType) }
        var parameter: [OpaquePointer?] = [g_variant_new_variant(g_variant_new_string(session))]
        var items: [OpaquePointer?] = [
            g_variant_new_string(action), g_variant_new_array(variantType, &parameter, 1),
            Value.dict([:]).makeGVariant(),
        ]
        return g_variant_new_tuple(&items, 3)
    }

    /// An activated app: reports once when its name is gone from the bus.
    private final class ActivationPending {
        let id: String
        let report: (Report) -> Void
        var watcher: guint = 0
        init(id: String, report: @escaping (Report) -> Void) { self.id = id; self.report = report }

        func watchName(on bus: OpaquePointer) {
            watcher = g_bus_watch_name_on_connection(
                bus, id, GBusNameWatcherFlags(rawValue: 0), nil,
                { _, _, user in
                    let me = Box<ActivationPending>.peek(user!)
                    guard me.watcher != 0 else { return }
                    g_bus_unwatch_name(me.watcher)
                    me.watcher = 0
                    me.report(.exited(status: 0))
                }, Box.retained(self), Box<ActivationPending>.release)
        }
    }
}

extension Agent {
    /// Launches a session's app; what becomes of it comes back as inputs.
    func launch(_ session: String, _ target: LaunchTarget) {
        Launcher.launch(target, session: session, log: log) { [weak self] report in
            switch report {
            case .started(let pid): self?.feed(.appLaunched(session: session, pid: pid))
            case .failed(let message): self?.feed(.appLaunchFailed(session: session, message: message))
            case .exited(let status): self?.feed(.appExited(session: session, status: status))
            }
        }
    }
}
