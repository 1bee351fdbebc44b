import CGLib
import FerryBus
import Foundation

/// Receives the agent's EventsAvailable signals for one session on a private thread running
/// its own GLib main context, so the app's threads (and its main loop, if any) are never used.
final class SignalThread: @unchecked Sendable {
    private let context: OpaquePointer
    private let loop: OpaquePointer
    private var thread: Thread?

    /// `onSignal`: events are waiting. `onAgentStarted`: a (new) agent took the bus name, e.g.
    /// after a crash; it does not know this client yet.
    init(
        client: BusClient, session: String, onSignal: @escaping @Sendable () -> Void,
        onAgentStarted: @escaping @Sendable () -> Void
    ) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        let ready = DispatchSemaphore(value: 0)
        /// The loop belongs to the thread below; the pointers only travel there.
        struct Loop: @unchecked Sendable { let context: OpaquePointer; let loop: OpaquePointer }
        let handles = Loop(context: context, loop: loop)
        let t = Thread {
            let (context, loop) = (handles.context, handles.loop)
            g_main_context_push_thread_default(context)
            // Subscribed here so that GDBus delivers the signal in this thread's context.
            let id = client.subscribe(Agent1.EventsAvailable.self, session: session) { _ in onSignal() }
            let owner = client.subscribeAgentOwner { change in
                if !change.newOwner.isEmpty { onAgentStarted() }
            }
            ready.signal()
            g_main_loop_run(loop)
            g_dbus_connection_signal_unsubscribe(client.connection, id)
            g_dbus_connection_signal_unsubscribe(client.connection, owner)
            while g_main_context_iteration(context, 0) != 0 {}  // run the unsubscribe's cleanup
            g_main_context_pop_thread_default(context)
        }
        t.name = "ferry-signals"
        t.start()
        thread = t
        ready.wait()
    }

    func stop() { g_main_loop_quit(loop) }

    deinit {
        g_main_loop_quit(loop)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }
}
