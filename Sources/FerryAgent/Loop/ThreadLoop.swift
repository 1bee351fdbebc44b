import CGLib
import FerryBus

/// A thread of its own running a GLib main context (the transfer threads': curl's sockets and
/// timers and the agent loop's commands are sources on it). Idle, it sleeps in poll, as the
/// agent's loop does: no wake-ups.
final class ThreadLoop: @unchecked Sendable {  // the context is GLib's to share between threads
    let context: OpaquePointer

    init(named name: String) {
        let context = g_main_context_new()!
        self.context = context
        startThread(named: name) {
            g_main_context_push_thread_default(context)
            let loop = g_main_loop_new(context, 0)
            g_main_loop_run(loop)  // for the agent's life
        }
    }
}

/// GLib sources attached to a given context (nil: the agent loop's, GLib's default), by id.
/// `g_timeout_add` and friends only know the default context.
enum ContextSource {
    /// A timer calling `fn(data)` after `milliseconds` (again while it returns true).
    static func timer(
        in context: OpaquePointer?, milliseconds: UInt32, _ fn: GSourceFunc, _ data: UnsafeMutableRawPointer?,
        destroy: GDestroyNotify? = nil
    ) -> UInt32 {
        attach(g_timeout_source_new(milliseconds), context, fn, data, destroy)
    }

    /// A closure on a timer: once, or again while it returns true.
    static func timer(in context: OpaquePointer?, milliseconds: UInt32, _ body: @escaping () -> Bool) -> UInt32 {
        timer(
            in: context, milliseconds: milliseconds, closureFn, Box<() -> Bool>.retained(body),
            destroy: Box<() -> Bool>.release)
    }

    /// Watches a file descriptor for `condition`.
    static func fd(
        in context: OpaquePointer?, _ fd: Int32, _ condition: GIOCondition, _ fn: GUnixFDSourceFunc,
        _ data: UnsafeMutableRawPointer?
    ) -> UInt32 {
        // A GUnixFDSourceFunc is called through the GSourceFunc slot (as g_unix_fd_add does).
        attach(g_unix_fd_source_new(fd, condition), context, unsafeBitCast(fn, to: GSourceFunc.self), data, nil)
    }

    /// Removes a source attached by this type (0: none).
    static func remove(_ id: UInt32, in context: OpaquePointer?) {
        guard id != 0, let source = g_main_context_find_source_by_id(context, id) else { return }
        g_source_destroy(source)
    }

    private static let closureFn: GSourceFunc = { data in Box<() -> Bool>.peek(data!)() ? 1 : 0 }

    private static func attach(
        _ source: UnsafeMutablePointer<GSource>?, _ context: OpaquePointer?, _ fn: GSourceFunc,
        _ data: UnsafeMutableRawPointer?, _ destroy: GDestroyNotify?
    ) -> UInt32 {
        g_source_set_callback(source, fn, data, destroy)
        let id = g_source_attach(source, context)
        g_source_unref(source)  // the context holds it now
        return id
    }
}
