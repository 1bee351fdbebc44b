import CGLib
import FerryBus
import Glibc

/// The GLib main loop that owns all agent state, with closure-based timers and signal handlers.
/// Everything here must be called on the loop's thread.
public final class MainLoop {
    public let loop: OpaquePointer

    public init() { loop = g_main_loop_new(nil, 0) }
    deinit { g_main_loop_unref(loop) }

    public func run() { g_main_loop_run(loop) }
    public func quit() { g_main_loop_quit(loop) }

    /// A closure called by a GLib source; returning false removes the source.
    typealias Callback = () -> Bool

    private static let sourceFn: GSourceFunc = { data in Box<Callback>.peek(data!)() ? 1 : 0 }
    private static let release: GDestroyNotify = Box<Callback>.release

    /// A timer on the loop. Returns the GLib source id (remove with `cancel`).
    @discardableResult
    public static func addTimer(milliseconds: UInt32, _ body: @escaping () -> Bool) -> UInt32 {
        let box = Box<Callback>.retained(body)
        return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, sourceFn, box, release)
    }

    /// Runs `body` once on the thread that runs `context` (callable from any thread).
    public static func invoke(in context: OpaquePointer, _ body: @escaping () -> Void) {
        let box = Box<Callback>.retained {
            body(); return false
        }
        g_main_context_invoke_full(context, G_PRIORITY_DEFAULT, sourceFn, box, release)
    }

    /// Runs once on the next loop iteration (callable from any thread: results of worker
    /// threads come back to the agent's loop this way).
    public static func idle(_ body: @escaping () -> Void) {
        let box = Box<Callback>.retained {
            body(); return false
        }
        g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, sourceFn, box, release)
    }

    /// An idle source (runs when nothing else is ready) that can be cancelled.
    public static func addIdle(_ body: @escaping () -> Bool) -> UInt32 {
        let box = Box<Callback>.retained(body)
        return g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, sourceFn, box, release)
    }

    public static func cancel(_ source: UInt32) {
        if source != 0 { g_source_remove(source) }
    }

    /// Unix signal handler run on the loop (g_unix_signal_add: safe, no async-signal rules).
    public static func onSignal(_ signum: Int32, _ body: @escaping () -> Void) {
        let box = Box<Callback>.retained {
            body(); return true
        }
        g_unix_signal_add_full(G_PRIORITY_HIGH, signum, sourceFn, box, release)
    }

    /// Microseconds since the epoch.
    public static var now: Int64 { Int64(g_get_real_time()) }
}
