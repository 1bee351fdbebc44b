import CSystemd
import FerryBus
import FerryCore
import Glibc
import Synchronization

/// A blocking sd-bus connection to the session bus for calls of the agent with large replies.
/// GDBus turns every value of a reply into a GVariant, which the client then turns into a
/// `Value` and frees: listing 100,000 tasks that way cost `ferry list` two thirds of its CPU.
/// sd-bus reads the wire format in place (`BusMessage`). One call at a time: an sd-bus
/// connection is not to be used by two threads at once.
public final class SDBusCaller: Sendable {
    private let bus: Mutex<OpaquePointer>
    public let timeoutMicroseconds: UInt64 = 30_000_000

    /// Connects to the session bus (DBUS_SESSION_BUS_ADDRESS, else the user's bus); nil when
    /// sd-bus cannot (the caller keeps to its GDBus connection).
    public init?() {
        var b: OpaquePointer?
        guard sd_bus_open_user(&b) >= 0, let b else { return nil }
        bus = Mutex(b)
    }

    /// Connects to the bus at `address` (tests, or a bus other than the session's).
    public init?(address: String) {
        var b: OpaquePointer?
        guard sd_bus_new(&b) >= 0, let b else { return nil }
        guard sd_bus_set_address(b, address) >= 0, sd_bus_set_bus_client(b, 1) >= 0, sd_bus_start(b) >= 0 else {
            sd_bus_flush_close_unref(b)
            return nil
        }
        bus = Mutex(b)
    }

    deinit { bus.withLock { _ = sd_bus_flush_close_unref($0) } }

    /// Calls a method of dev.ferry.Agent1; D-Bus errors come back as FerryError, as
    /// `BusClient.call`'s do.
    public func call(_ method: String, _ args: [Value]) throws -> [Value] {
        try bus.withLock { bus in
            var m: OpaquePointer?
            guard
                sd_bus_message_new_method_call(bus, &m, BusNames.agent, BusNames.path, BusNames.interface, method) >= 0,
                let m
            else { throw FerryError(.failed, "cannot make a D-Bus call of \(method)") }
            defer { sd_bus_message_unref(m) }
            guard BusMessage(pointer: m).append(args) else {
                throw FerryError(.invalidArgument, "the arguments of \(method) do not fit its D-Bus types")
            }
            var error = sd_bus_error()
            defer { sd_bus_error_free(&error) }
            var reply: OpaquePointer?
            let r = sd_bus_call(bus, m, timeoutMicroseconds, &error, &reply)
            guard r >= 0, let reply else {
                let name = error.name.map { String(cString: $0) } ?? ""
                let message = error.message.map { String(cString: $0) } ?? String(cString: strerror(-r))
                if name.hasPrefix(FerryError.domain) { throw FerryError(dbusName: name, message: message) }
                throw FerryError(.failed, name.isEmpty ? message : "\(message) (\(name))")
            }
            defer { sd_bus_message_unref(reply) }
            return BusMessage(pointer: reply).values()
        }
    }
}
