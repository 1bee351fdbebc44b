import CGLib
import FerryCore

/// A synchronous connection to the agent, for the CLI and the client library.
/// Calls block the calling thread; nothing here needs a running main loop.
public final class BusClient: @unchecked Sendable {
    public let connection: OpaquePointer
    public var timeoutMilliseconds: Int32 = 30_000

    /// Connects to the session bus (DBUS_SESSION_BUS_ADDRESS), or throws saying how to get one.
    public init() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw FerryError(
                .failed,
                "no D-Bus session bus (\(message)). Ferry runs in a desktop session; in a bare shell or over ssh "
                    + "start one with: dbus-run-session -- $SHELL"
            )
        }
        connection = c
    }

    /// A private connection to the bus at `address` (tests, or a bus other than the session's).
    public init(address: String) throws {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let c = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw FerryError(.failed, "cannot connect to the bus at \(address): \(message)")
        }
        connection = c
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(connection)) }

    /// The session bus's address (for a private connection of one's own to it).
    public static func sessionBusAddress() throws -> String {
        var error: UnsafeMutablePointer<GError>?
        guard let a = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw FerryError(
                .failed,
                "no D-Bus session bus (\(message)). Ferry runs in a desktop session; in a bare shell or over ssh "
                    + "start one with: dbus-run-session -- $SHELL"
            )
        }
        defer { g_free(a) }
        return String(cString: a)
    }

    /// Leaves the bus: the agent sees this client go.
    public func close() { g_dbus_connection_close_sync(connection, nil, nil) }

    /// Calls a method of dev.ferry.Agent1; D-Bus errors come back as FerryError.
    /// `fds`: descriptors sent along (the `.handle` indices in `args` point into them).
    public func call(
        _ method: String, _ args: [Value] = [], fds: [Int32] = [], autoStart: Bool = true
    ) throws -> [Value] {
        try callRaw(
            destination: BusNames.agent, path: BusNames.path, interface: BusNames.interface,
            method: method, args: args, fds: fds, autoStart: autoStart)
    }

    public func callRaw(
        destination: String, path: String, interface: String, method: String,
        args: [Value], fds: [Int32] = [], autoStart: Bool = true
    ) throws -> [Value] {
        var error: UnsafeMutablePointer<GError>?
        let params = Value.tuple(args).makeGVariant()
        let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        var fdList: UnsafeMutablePointer<GUnixFDList>?
        if !fds.isEmpty {
            fdList = g_unix_fd_list_new()
            for fd in fds where g_unix_fd_list_append(fdList, fd, &error) < 0 {  // appends a duplicate
                g_object_unref(UnsafeMutableRawPointer(fdList))
                throw Self.convert(error)
            }
        }
        defer { if let fdList { g_object_unref(UnsafeMutableRawPointer(fdList)) } }
        guard
            let reply = g_dbus_connection_call_with_unix_fd_list_sync(
                connection, destination, path, interface, method,
                params, nil, flags, timeoutMilliseconds, fdList,
                nil, nil, &error)
        else {
            throw Self.convert(error)
        }
        defer { g_variant_unref(reply) }
        return Value(reply).tupleValue ?? []
    }

    /// Sends a call of the agent without blocking; `done` runs from the thread-default main
    /// context of the caller (the Downloads window's GTK loop) when the reply or error arrives.
    public func send<Reply>(_ call: AgentCall<Reply>, _ done: @escaping (Result<Reply, FerryError>) -> Void) {
        sendRaw(
            destination: BusNames.agent, path: BusNames.path, interface: BusNames.interface,
            method: call.method.rawValue, args: call.args
        ) { result in
            done(
                result.flatMap { reply in
                    do { return .success(try call.decode(reply)) } catch let e as FerryError {
                        return .failure(e)
                    } catch {
                        return .failure(FerryError(.failed, "\(error)"))
                    }
                })
        }
    }

    /// Any method of any service on this bus, without blocking (see `send`).
    public func sendRaw(
        destination: String, path: String, interface: String, method: String, args: [Value],
        _ done: @escaping (Result<[Value], FerryError>) -> Void
    ) {
        let finish: (OpaquePointer?, OpaquePointer?) -> Void = { source, result in
            var error: UnsafeMutablePointer<GError>?
            guard let reply = g_dbus_connection_call_finish(source, result, &error) else {
                done(.failure(Self.convert(error)))
                return
            }
            defer { g_variant_unref(reply) }
            done(.success(Value(reply).tupleValue ?? []))
        }
        g_dbus_connection_call(
            connection, destination, path, interface, method, Value.tuple(args).makeGVariant(), nil,
            G_DBUS_CALL_FLAGS_NONE, timeoutMilliseconds, nil,
            { source, result, user in
                Box<(OpaquePointer?, OpaquePointer?) -> Void>.take(user!)(OpaquePointer(source), result)
            }, Box.retained(finish))
    }

    /// Does some process own the agent's name right now?
    public func agentIsRunning() -> Bool {
        let reply = try? callRaw(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", method: "NameHasOwner",
            args: [.string(BusNames.agent)])
        return reply.flatMap { BusReader.read($0, "NameHasOwner") { try $0.bool() } } ?? false
    }

    /// Is the agent activatable by the bus (an installed service file)?
    public func agentIsActivatable() -> Bool {
        let reply = try? callRaw(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", method: "ListActivatableNames", args: [])
        return reply?.first.map { $0 == .strings([]) ? false : ($0.arrayValue ?? []).contains(.string(BusNames.agent)) }
            ?? false
    }

    static func convert(_ error: UnsafeMutablePointer<GError>?) -> FerryError {
        guard let error else { return FerryError(.failed, "D-Bus call failed") }
        defer { var e: UnsafeMutablePointer<GError>? = error; g_clear_error(&e) }
        var name = ""
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
            g_dbus_error_strip_remote_error(error)
        }
        let message = String(cString: error.pointee.message)
        if name.hasPrefix(FerryError.domain) { return FerryError(dbusName: name, message: message) }
        return FerryError(.failed, name.isEmpty ? message : "\(message) (\(name))")
    }
}

extension BusClient {
    /// Calls `handler` for each `signal` of dev.ferry.Agent1 (only those whose first argument is
    /// `session`, when given), from the thread-default main context (run a GMainLoop to receive
    /// them). Returns the subscription id.
    /// Clients use the typed `subscribe(_:session:_:)` (Agent1Signals.swift).
    @discardableResult
    func subscribe(_ signal: String, session: String? = nil, _ handler: @escaping ([Value]) -> Void) -> UInt32 {
        subscribe(
            sender: BusNames.agent, interface: BusNames.interface, path: BusNames.path,
            signal: signal, arg0: session, handler)
    }

    /// A signal of the bus itself (org.freedesktop.DBus), e.g. NameOwnerChanged for one name.
    @discardableResult
    public func subscribeBus(_ signal: String, arg0: String?, _ handler: @escaping ([Value]) -> Void) -> UInt32 {
        subscribe(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            signal: signal, arg0: arg0, handler)
    }

    private func subscribe(
        sender: String, interface: String, path: String, signal: String, arg0: String?,
        _ handler: @escaping ([Value]) -> Void
    ) -> UInt32 {
        let callback: GDBusSignalCallback = { _, _, _, _, _, params, user in
            Box<([Value]) -> Void>.peek(user!)(params.map { Value($0).tupleValue ?? [] } ?? [])
        }
        return g_dbus_connection_signal_subscribe(
            connection, sender, interface, signal, path, arg0,
            G_DBUS_SIGNAL_FLAGS_NONE, callback, Box.retained(handler), Box<([Value]) -> Void>.release)
    }
}
