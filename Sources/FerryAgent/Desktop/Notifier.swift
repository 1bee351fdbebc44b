import CFerryShim
import CGLib
import CNotify
import FerryCore
import Logging
import FerryBus
import Glibc
import FoundationEssentials

/// "Download complete!" popups through libnotify (freedesktop notifications).
/// Downloads that end within one window share a popup. With no notification server the
/// agent logs that once and carries on.
/// `post` and the coalescing run on the agent's loop; every libnotify call runs on the
/// popup thread (`show`, `closed`, `invoked`), and what a click means goes back to the loop.
final class Notifier {
    let log: Logger
    var enabled = true
    var windowMilliseconds: UInt32 = 1_000
    /// The user clicked a popup (the badge resets); an app's session when it was an app's.
    var onActivated: (String?) -> Void = { _ in }
    private var pending: [PopupPlan.Outcome] = []
    private var timer: UInt32 = 0
    private let thread = PopupThread()
    // Popup thread only:
    private var serverMissingLogged = false
    /// Shown popups, kept alive until closed or their actions are lost.
    private var live: [UnsafeMutableRawPointer: Box<Popup>] = [:]
    /// What a popup's callbacks need: its notifier, the file its actions open, the app's session.
    typealias Popup = (notifier: Notifier, file: String?, appSession: String?)

    /// Files delivered to an app (its session inbox): no Open / Show in folder actions.
    var appOwned: (String) -> Bool = { _ in false }

    init(logger: Logger) {
        log = logger
        thread.async { notify_init("Ferry") }
    }

    func post(_ outcome: PopupPlan.Outcome) {
        guard enabled else { return }
        pending.append(outcome)
        if timer == 0 {
            timer = MainLoop.addTimer(milliseconds: windowMilliseconds) { [weak self] in
                self?.timer = 0
                self?.flush()
                return false
            }
        }
    }

    private func flush() {
        let outcomes = pending
        pending.removeAll()
        // A file an app takes over (moved away during its callback) cannot be opened from here later.
        let plans = PopupPlan.plan(outcomes).map { plan -> (PopupPlan, String?) in
            (plan, plan.file.flatMap { appOwned($0) ? nil : $0 })
        }
        thread.async { [self] in for (plan, file) in plans { show(plan, file: file) } }
    }

    private func show(_ plan: PopupPlan, file: String?) {
        guard let n = notify_notification_new(plan.summary, plan.body, plan.icon) else { return }
        let raw = UnsafeMutableRawPointer(n)
        notify_notification_set_category(n, plan.category)
        notify_notification_set_hint(n, "desktop-entry", g_variant_new_string("ferry"))
        if plan.category == "transfer.complete" {
            notify_notification_set_hint(n, "sound-name", g_variant_new_string("complete-download"))
        }
        let box = Box<Popup>((self, file, plan.appSession))
        let user = Box.unretained(box)
        let action: NotifyActionCallback = { n, action, user in
            let popup = Box<Popup>.peek(user!)
            popup.notifier.invoked(
                action: action.map { String(cString: $0) } ?? "", file: popup.file, appSession: popup.appSession)
        }
        notify_notification_add_action(n, "default", "Open", action, user, nil)
        if file != nil {
            notify_notification_add_action(n, "open", "Open", action, user, nil)
            notify_notification_add_action(n, "show", "Show in Folder", action, user, nil)
        }
        let closed: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { n, user in
            Box<Popup>.peek(user!).notifier.closed(n!)
        }
        g_signal_connect_data(raw, "closed", unsafeBitCast(closed, to: GCallback.self), user, nil, GConnectFlags(0))
        var error: UnsafeMutablePointer<GError>?
        if notify_notification_show(n, &error) == 0 {
            if !serverMissingLogged {
                let why = error.map { String(cString: $0.pointee.message) } ?? "?"
                log.notice("no notification server (\(why)): popups are off until one appears")
                serverMissingLogged = true
            }
            g_clear_error(&error)
            g_object_unref(raw)
            return
        }
        serverMissingLogged = false
        live[raw] = box
    }

    private func closed(_ n: UnsafeMutableRawPointer) {
        guard live.removeValue(forKey: n) != nil else { return }
        g_object_unref(n)
    }

    private func invoked(action: String, file: String?, appSession: String?) {
        let log = self.log
        MainLoop.idle { [weak self] in
            self?.onActivated(appSession)
            guard let file else { return }
            switch action {
            case "default", "open": Opener.open(file, log: log)
            case "show": Opener.showInFolder(file, log: log)
            default: break
            }
        }
    }
}

/// Opens files the desktop way (xdg-open), and shows them in the file manager.
enum Opener {
    static func open(_ path: String, log: Logger) { spawn(["xdg-open", path], log: log) }

    /// Asks the file manager (FileManager1.ShowItems) without waiting for it; when none
    /// answers, the folder opens with xdg-open.
    static func showInFolder(_ path: String, log: Logger) {
        let folder = PathName.folder(of: path)
        let fallback: () -> Void = { spawn(["xdg-open", folder], log: log) }
        // the agent's own, cached
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else { fallback(); return }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        let uri = URL(filePath: path, directoryHint: .notDirectory).absoluteString
        let args = Value.tuple([.strings([uri]), .string("")]).makeGVariant()
        g_dbus_connection_call(
            bus, "org.freedesktop.FileManager1", "/org/freedesktop/FileManager1",
            "org.freedesktop.FileManager1", "ShowItems", args, nil,
            G_DBUS_CALL_FLAGS_NONE, 5_000, nil,
            { source, result, user in
                let fallback = Box<() -> Void>.take(user!)
                var error: UnsafeMutablePointer<GError>?
                if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                    g_variant_unref(reply)
                } else {
                    g_clear_error(&error)
                    fallback()
                }
            }, Box.retained(fallback))
    }

    static func spawn(_ argv: [String], log: Logger) {
        do { _ = try AppSpawner.spawn(argv, log: log) } catch { log.warning("\(error)") }
    }
}
