import CGLib
import FoundationEssentials

/// A thread with its own GLib main context for libnotify. libnotify's calls are synchronous
/// D-Bus calls (up to 25 s when a notification server hangs): here they block only this
/// thread, never the agent's loop. Popup signals (actions, closed) are dispatched here too,
/// because libnotify's proxy is created on this thread's context.
final class PopupThread {
    private let context: OpaquePointer

    init() {
        context = g_main_context_new()
        // GMainContext is thread-safe; this thread is the only one that runs it.
        struct Handoff: @unchecked Sendable { let context: OpaquePointer }
        let handoff = Handoff(context: context)
        startThread(named: "ferry-popups") {
            g_main_context_push_thread_default(handoff.context)
            let loop = g_main_loop_new(handoff.context, 0)
            g_main_loop_run(loop)  // for the agent's lifetime
        }
    }

    /// Runs `body` on the popup thread, in order.
    func async(_ body: @escaping () -> Void) { MainLoop.invoke(in: context, body) }
}
