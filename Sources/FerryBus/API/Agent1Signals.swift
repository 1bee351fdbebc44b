import FerryCore

/// A signal of dev.ferry.Agent1 as both ends see it: its name and its payload as typed fields
/// (written by the agent with `arguments`, read by clients with `init(_:)`); generated from the
/// XML as the method types are (`Agent1.TaskChanged`).
public protocol Agent1Signal: Sendable {
    static var signal: AgentSignal { get }
    var arguments: [Value] { get }
    init(_ r: inout BusReader) throws
}

extension Agent1Signal {
    /// A received signal's payload; nil when it is malformed (a signal has no one to answer).
    public init?(signal values: [Value]) {
        var r = BusReader(values, reading: Self.signal.rawValue)
        guard let s = try? Self(&r) else { return nil }
        self = s
    }
}

/// org.freedesktop.DBus.NameOwnerChanged: a name got a new owner ("" when it left the bus).
public struct NameOwnerChanged: Sendable {
    public var name: String
    public var oldOwner: String
    public var newOwner: String

    public init?(signal values: [Value]) {
        var r = BusReader(values, reading: "NameOwnerChanged")
        guard let name = try? r.string(), let old = try? r.string(), let new = try? r.string() else { return nil }
        self.name = name; oldOwner = old; newOwner = new
    }
}

extension BusClient {
    /// Calls `handler` with each `S` the agent sends (only those about `session`, when given;
    /// a malformed one is dropped), from the thread-default main context. Returns the
    /// subscription id.
    @discardableResult
    public func subscribe<S: Agent1Signal>(
        _ signal: S.Type, session: String? = nil, _ handler: @escaping (S) -> Void
    ) -> UInt32 {
        subscribe(S.signal.rawValue, session: session) { values in
            if let s = S(signal: values) { handler(s) }
        }
    }

    /// Calls `handler` when the agent's bus name changes owner (started, replaced, gone).
    @discardableResult
    public func subscribeAgentOwner(_ handler: @escaping (NameOwnerChanged) -> Void) -> UInt32 {
        subscribeBus("NameOwnerChanged", arg0: BusNames.agent) { values in
            if let s = NameOwnerChanged(signal: values) { handler(s) }
        }
    }
}
