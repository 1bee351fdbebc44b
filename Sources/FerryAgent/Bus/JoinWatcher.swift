import CSystemd
import FerryBus
import FerrySDBus
import Glibc

/// When each connection joined the bus, as close to the bus's own moment as this process can
/// see it: a thread of its own, with its own connection, reads the bus's NameOwnerChanged as it
/// comes, whatever the loop is doing (a long turn, an app's big batch). The loop's own reading
/// of the join can come much later, and a process that took a departed caller's pid meanwhile
/// would have started "before" it. What remains: the moment the whole agent cannot run
/// (stopped, or a starved machine); a bus that gives a pidfd (ProcessFD) closes that too.
final class JoinWatcher: @unchecked Sendable {
    private let lock = Lock()
    /// Boot-clock ticks at which each connection on the bus was seen joining; gone when it leaves.
    private var joined: [String: UInt64] = [:]

    /// Starts watching on its own thread (its connection is that thread's alone). Without a bus
    /// it sees nothing, and the loop's own readings serve.
    func start() {
        let me = Unmanaged.passRetained(self).toOpaque()  // the thread's, for the agent's life
        startThread(named: "ferry-joins") {
            var b: OpaquePointer?
            guard sd_bus_open_user(&b) >= 0, let b else { return }
            let rule =
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'"
            guard sd_bus_add_match_async(b, nil, rule, Self.changed, nil, me) >= 0 else { sd_bus_unref(b); return }
            Unmanaged<JoinWatcher>.fromOpaque(me).takeUnretainedValue().run(b)
        }
    }

    /// When `name` was seen joining (nil: not seen, or it left).
    func joinedAt(_ name: String) -> UInt64? {
        lock.lock(); defer { lock.unlock() }
        return joined[name]
    }

    private func run(_ b: OpaquePointer) {
        while true {
            var r: Int32
            repeat { r = sd_bus_process(b, nil) } while r > 0
            guard r >= 0, sd_bus_wait(b, UInt64.max) >= 0 || errno == EINTR else { return }
        }
    }

    private static let changed: sd_bus_message_handler_t = { m, user, _ in
        guard let m, let change = NameOwnerChanged(signal: BusMessage(pointer: m).values()), change.name.hasPrefix(":")
        else { return 0 }
        let now = CallerIdentity.bootTicks()
        let me = Unmanaged<JoinWatcher>.fromOpaque(user!).takeUnretainedValue()
        me.lock.lock()
        if change.oldOwner.isEmpty, !change.newOwner.isEmpty { me.joined[change.name] = now }
        if change.newOwner.isEmpty { me.joined[change.name] = nil }
        me.lock.unlock()
        return 0
    }
}
