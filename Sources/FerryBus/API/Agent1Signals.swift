import FerryCore

/// A signal of dev.ferry.Agent1 as both ends see it: its name and its payload as typed fields
/// (written by the agent with `arguments`, read by clients with `init(_:)`).
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

extension Agent1 {
    /// A session has new events.
    public struct EventsAvailable: Agent1Signal {
        public static let signal = AgentSignal.eventsAvailable
        public var session: String
        public var latestSeq: UInt64
        public init(session: String, latestSeq: UInt64) { self.session = session; self.latestSeq = latestSeq }
        public var arguments: [Value] { [.string(session), .uint64(latestSeq)] }
        public init(_ r: inout BusReader) throws { session = try r.string(); latestSeq = try r.uint64() }
    }

    /// A task was created or changed state.
    public struct TaskChanged: Agent1Signal {
        public static let signal = AgentSignal.taskChanged
        public var task: Int64
        public var state: TaskState
        public init(task: Int64, state: TaskState) { self.task = task; self.state = state }
        public var arguments: [Value] { [.uint64(UInt64(task)), .string(state.rawValue)] }
        public init(_ r: inout BusReader) throws {
            task = try r.task()
            let name = try r.string()
            guard let state = TaskState(rawValue: name) else { throw FerryError(.invalidArgument, "unknown state \(name.prefix(32))") }
            self.state = state
        }
    }

    /// Tasks left the list.
    public struct TasksRemoved: Agent1Signal {
        public static let signal = AgentSignal.tasksRemoved
        public var tasks: [Int64]
        public init(tasks: [Int64]) { self.tasks = tasks }
        public var arguments: [Value] { [.array(tasks.map { .uint64(UInt64($0)) }, elementType: "t")] }
        public init(_ r: inout BusReader) throws { tasks = try r.array(of: "t") { try BusReader.taskID($0) } }
    }

    /// Running tasks' bytes moved (expected -1: unknown).
    public struct TasksProgressed: Agent1Signal {
        public static let signal = AgentSignal.tasksProgressed
        static let elementType = "(txx)"
        public var progress: [TaskProgress]
        public init(progress: [TaskProgress]) { self.progress = progress }
        public var arguments: [Value] {
            [.array(progress.map { .tuple([.uint64(UInt64($0.task)), .int64($0.received), .int64($0.expected)]) }, elementType: Self.elementType)]
        }
        public init(_ r: inout BusReader) throws {
            progress = try r.array(of: Self.elementType) { item in
                try BusReader.members(of: item, reading: "TasksProgressed") { f in
                    TaskProgress(task: try f.task(), received: try f.int64(), expected: try f.int64())
                }
            }
        }
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
    public func subscribe<S: Agent1Signal>(_ signal: S.Type, session: String? = nil, _ handler: @escaping (S) -> Void) -> UInt32 {
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
