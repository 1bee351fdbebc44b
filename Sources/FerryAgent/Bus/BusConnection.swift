import CGLib
import CSystemd
import FerryBus
import FerrySDBus
import Glibc

/// The agent's connection to the session bus: sd-bus, driven by a GLib source on the agent's
/// loop. The loop reads: sd-bus hands over each message no handler of its own took (it answers
/// org.freedesktop.DBus.Peer itself), and the agent decides after sd-bus has returned, never
/// inside its callbacks. Messages are built and sent from the loop or the outbox thread; sd-bus
/// is not thread-safe, so every use of it holds `lock` (briefly: one message built and sent,
/// or one round of reading, at most 64 messages; the handling happens after it is released).
final class BusConnection: @unchecked Sendable {
    private let bus: OpaquePointer
    private let lock = Lock()
    private var source: UnsafeMutablePointer<GSource>?
    private var tag: gpointer?
    /// The poll events the source waits for now.
    private var watched = Int32(POLLIN)
    private(set) var isClosed = false

    /// Method calls and signals addressed to the agent or broadcast (on the loop).
    var onMessage: (BusMessage) -> Void = { _ in }
    /// The bus went away (on the loop, once).
    var onClose: () -> Void = {}

    /// What came in during one processing round, in order (filled under `lock`, also from
    /// sd-bus's reply callback).
    private enum Received { case message(OpaquePointer), reply(Int, OpaquePointer) }
    private var received: [Received] = []
    private var replyHandlers: [Int: (Result<[Value], BusCallError>) -> Void] = [:]
    private var nextToken = 1

    struct BusCallError: Error, CustomStringConvertible {
        let name: String, message: String
        var description: String { "\(name): \(message)" }
    }

    /// Connects to the session bus (a local socket: connecting does not wait; authentication
    /// and Hello run on the loop).
    init() throws {
        var b: OpaquePointer?
        let r = sd_bus_open_user(&b)
        guard r >= 0, let b else { throw BusCallError(name: "connect", message: String(cString: strerror(-r))) }
        bus = b
    }

    /// Starts reading on the thread-default main context.
    func attach() {
        let size = MemoryLayout<GSource>.size + MemoryLayout<UnsafeRawPointer>.size
        let s = g_source_new(Self.funcs, guint(size))!
        (UnsafeMutableRawPointer(s) + MemoryLayout<GSource>.size).storeBytes(
            of: Unmanaged.passUnretained(self).toOpaque(), as: UnsafeMutableRawPointer.self)
        tag = g_source_add_unix_fd(s, sd_bus_get_fd(bus), G_IO_IN)
        sd_bus_add_filter(bus, nil, Self.peerCalls, Unmanaged.passUnretained(self).toOpaque())
        g_source_set_name(s, "ferry-bus")
        g_source_attach(s, nil)
        source = s
    }

    // MARK: - Sending (any thread)

    /// Runs `body` with the bus held; wakes the loop when sd-bus has queued what the socket would
    /// not take at once (the loop then writes it when the socket can take more).
    private func locked<T>(_ body: (OpaquePointer) -> T) -> T {
        lock.lock()
        let result = body(bus)
        let waiting = !isClosed && sd_bus_get_events(bus) & Int32(POLLOUT) != 0
        lock.unlock()
        if waiting { g_main_context_wakeup(nil) }
        return result
    }

    /// Makes a message with `make`, fills it with `fill` and sends it.
    private func sendNew(_ make: (OpaquePointer, inout OpaquePointer?) -> Int32, _ fill: (BusMessage) -> Bool) -> Bool {
        locked { bus in
            var m: OpaquePointer?
            guard make(bus, &m) >= 0, let m else { return false }
            defer { sd_bus_message_unref(m) }
            guard fill(BusMessage(pointer: m)) else { return false }
            return sd_bus_send(bus, m, nil) >= 0
        }
    }

    func reply(to call: BusCall, _ values: [Value]) {
        _ = sendNew({ _, m in sd_bus_message_new_method_return(call.message, &m) }) { $0.append(values) }
    }

    /// A reply of one variant (org.freedesktop.DBus.Properties.Get).
    func reply(to call: BusCall, variant: Value) {
        _ = sendNew({ _, m in sd_bus_message_new_method_return(call.message, &m) }) { $0.append(variant: variant) }
    }

    func replyError(to call: BusCall, name: String, message: String) {
        _ = sendNew({ _, m in
            name.withCString { n in
                message.withCString { text in
                    var e = sd_bus_error(name: n, message: text, _need_free: 0)
                    return sd_bus_message_new_method_error(call.message, &m, &e)
                }
            }
        }) { _ in true }
    }

    /// A signal, broadcast (`destination` nil) or to one connection.
    func signal(path: String, interface: String, member: String, _ values: [Value], destination: String? = nil) {
        _ = sendNew({ bus, m in
            let r = sd_bus_message_new_signal(bus, &m, path, interface, member)
            if r >= 0, let destination, let m { return sd_bus_message_set_destination(m, destination) }
            return r
        }) { $0.append(values) }
    }

    /// Calls a method; `reply` runs on the loop with the reply's arguments or its error
    /// (also when the call could not be sent, or the bus closed).
    func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ args: [Value],
        timeoutMilliseconds: UInt64, reply: @escaping (Result<[Value], BusCallError>) -> Void
    ) {
        let sent: Int32 = locked { bus in
            var m: OpaquePointer?
            var r = sd_bus_message_new_method_call(bus, &m, destination, path, interface, member)
            guard r >= 0, let m else { return r }
            defer { sd_bus_message_unref(m) }
            guard BusMessage(pointer: m).append(args) else { return -EINVAL }
            let token = nextToken
            nextToken += 1
            let ticket = Unmanaged.passRetained(ReplyTicket(connection: self, token: token)).toOpaque()
            r = sd_bus_call_async(bus, nil, m, Self.replied, ticket, timeoutMilliseconds * 1_000)
            if r < 0 { Unmanaged<ReplyTicket>.fromOpaque(ticket).release() } else { replyHandlers[token] = reply }
            return r
        }
        if sent < 0 {
            let error = BusCallError(
                name: "org.freedesktop.DBus.Error.Failed", message: String(cString: strerror(-sent)))
            MainLoop.idle { reply(.failure(error)) }
        }
    }

    /// Writes out everything queued (when the agent exits).
    func flush() {
        lock.lock()
        if !isClosed { sd_bus_flush(bus) }
        lock.unlock()
    }

    private final class ReplyTicket {
        unowned let connection: BusConnection
        let token: Int
        init(connection: BusConnection, token: Int) { self.connection = connection; self.token = token }
    }

    /// sd-bus's reply callback (inside `sd_bus_process`, with `lock` held): only notes the reply.
    private static let replied: sd_bus_message_handler_t = { m, user, _ in
        let ticket = Unmanaged<ReplyTicket>.fromOpaque(user!).takeRetainedValue()
        ticket.connection.received.append(.reply(ticket.token, sd_bus_message_ref(m)!))
        return 1
    }

    /// sd-bus answers org.freedesktop.DBus.Peer itself, whatever the arguments: its filter runs
    /// first (inside `sd_bus_process`, with `lock` held) and only hands the call over, to be
    /// routed, signature checked, like every other.
    private static let peerCalls: sd_bus_message_handler_t = { m, user, _ in
        guard let m, sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Peer", nil) > 0 else { return 0 }
        Unmanaged<BusConnection>.fromOpaque(user!).takeUnretainedValue().received.append(
            .message(sd_bus_message_ref(m)!))
        return 1
    }

    // MARK: - Reading (the loop)

    private static func of(_ s: UnsafeMutablePointer<GSource>?) -> BusConnection {
        let raw = (UnsafeMutableRawPointer(s!) + MemoryLayout<GSource>.size).load(as: UnsafeMutableRawPointer.self)
        return Unmanaged<BusConnection>.fromOpaque(raw).takeUnretainedValue()
    }

    private static let funcs: UnsafeMutablePointer<GSourceFuncs> = {
        let f = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
        f.initialize(to: GSourceFuncs())
        f.pointee.prepare = { s, timeout in of(s).prepare(timeout) ? 1 : 0 }
        f.pointee.check = { s in of(s).check() ? 1 : 0 }
        f.pointee.dispatch = { s, _, _ in of(s).dispatch() ? 1 : 0 }
        return f
    }()

    private static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// When sd-bus next needs the loop: the events it waits for on its socket, and the deadline
    /// of its earliest pending call (none at rest: no wake-ups) or now, when it has read messages
    /// not yet handed over.
    private func prepare(_ timeout: UnsafeMutablePointer<gint>?) -> Bool {
        if isClosed { timeout?.pointee = -1; return false }
        lock.lock()
        let events = sd_bus_get_events(bus)
        var deadline: UInt64 = 0
        let hasDeadline = sd_bus_get_timeout(bus, &deadline) > 0
        lock.unlock()
        // Only on a change: GLib wakes the loop whenever a source's events are set.
        if events >= 0, events != watched {
            watched = events
            g_source_modify_unix_fd(source, tag, GIOCondition(rawValue: UInt32(events)))
        }
        guard hasDeadline, deadline != UInt64.max else { timeout?.pointee = -1; return false }
        let now = Self.monotonicMicroseconds()
        if deadline <= now { timeout?.pointee = 0; return true }
        timeout?.pointee = gint(clamping: (deadline - now + 999) / 1_000)
        return false
    }

    private func check() -> Bool {
        if isClosed { return false }
        if g_source_query_unix_fd(source, tag).rawValue != 0 { return true }
        lock.lock()
        var deadline: UInt64 = 0
        let due = sd_bus_get_timeout(bus, &deadline) > 0 && deadline <= Self.monotonicMicroseconds()
        lock.unlock()
        return due
    }

    /// Lets sd-bus read, write and time out calls, then hands what came over, outside the lock.
    /// At most 64 messages a round, so that transfers get their turns during a flood of calls.
    private func dispatch() -> Bool {
        lock.lock()
        var failure: Int32 = 0
        for _ in 0..<64 {
            var m: OpaquePointer?
            let r = sd_bus_process(bus, &m)
            if r < 0 { failure = r; isClosed = true; break }
            if let m { received.append(.message(m)) }
            if r == 0 { break }
        }
        let batch = received
        received = []
        var handlers: [(Result<[Value], BusCallError>) -> Void] = []
        for case .reply(let token, _) in batch { handlers.append(replyHandlers.removeValue(forKey: token) ?? { _ in }) }
        lock.unlock()

        var next = 0
        for item in batch {
            switch item {
            case .message(let m): onMessage(BusMessage(pointer: m))
            case .reply(_, let m):
                let message = BusMessage(pointer: m)
                handlers[next](
                    message.error.map { .failure(BusCallError(name: $0.name, message: $0.message)) }
                        ?? .success(message.values()))
                next += 1
            }
        }
        if !batch.isEmpty {
            lock.lock()
            for item in batch {
                switch item {
                case .message(let m), .reply(_, let m): sd_bus_message_unref(m)
                }
            }
            lock.unlock()
        }
        guard failure == 0 else {
            onClose()
            return false
        }
        return true
    }

    /// Takes a reference to a received method call until it is answered (replies are sent from
    /// the outbox thread, so the last reference may go there).
    func retain(_ message: BusMessage) -> BusCall {
        locked { _ in sd_bus_message_ref(message.pointer) }
        return BusCall(message: message.pointer, connection: self)
    }

    fileprivate func release(_ message: OpaquePointer) {
        locked { _ in sd_bus_message_unref(message) }
    }
}

/// A method call the agent is answering; it answers each exactly once.
final class BusCall: @unchecked Sendable {
    let message: OpaquePointer
    private let connection: BusConnection
    fileprivate init(message: OpaquePointer, connection: BusConnection) {
        self.message = message; self.connection = connection
    }
    deinit { connection.release(message) }
    var incoming: BusMessage { BusMessage(pointer: message) }
}
