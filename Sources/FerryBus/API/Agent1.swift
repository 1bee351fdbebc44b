import FerryCore

/// A method of dev.ferry.Agent1 as both ends see it: its name, its arguments as typed fields
/// (written by a client with `arguments`, read by the agent with `init(_:)`), and its reply
/// (`reply`: written by the agent, read by the client). One type per method, in
/// `Agent1+Sessions.swift` and `Agent1+Tasks.swift`; `InterfaceContractTests` checks each
/// against desktop/dev.ferry.Agent1.xml.
public protocol Agent1Method: Sendable {
    associatedtype Reply
    static var method: AgentMethod { get }
    static var reply: ReplyCodec<Reply> { get }
    /// The arguments in the XML's order.
    var arguments: [Value] { get }
    /// Reads the arguments; a missing or mistyped one is an InvalidArgument naming it.
    init(_ r: inout BusReader) throws
}

extension Agent1Method {
    /// Reads a call's arguments; values left over are refused too.
    public init(arguments values: [Value]) throws {
        var r = BusReader(values, reading: Self.method.rawValue)
        try self.init(&r)
        try r.finish()
    }
}

/// How one kind of reply goes on the bus and comes back.
public struct ReplyCodec<T>: Sendable {
    public let encode: @Sendable (T) -> [Value]
    let read: @Sendable (inout BusReader) throws -> T

    public init(encode: @escaping @Sendable (T) -> [Value], decode: @escaping @Sendable (inout BusReader) throws -> T) {
        self.encode = encode
        self.read = decode
    }

    public func decode(_ values: [Value], method: AgentMethod) throws -> T {
        var r = BusReader(values, reading: "the agent's \(method.rawValue) reply")
        return try read(&r)
    }
}

/// The replies the methods share.
public enum Replies {
    public static let none = ReplyCodec<Void>(encode: { _ in [] }, decode: { _ in })
    public static let task = ReplyCodec<Int64>(encode: { [.uint64(UInt64($0))] }, decode: { try $0.task() })
    public static let tasks = ReplyCodec<[Int64]>(encode: { [.array($0.map { .uint64(UInt64($0)) }, elementType: "t")] },
                                                  decode: { try $0.array(of: "t") { try BusReader.taskID($0) } })
    public static let count = ReplyCodec<Int>(encode: { [.uint32(UInt32(clamping: $0))] }, decode: { try $0.count() })
    public static let bytes = ReplyCodec<[UInt8]>(encode: { [.bytes($0)] }, decode: { try $0.bytes() })
    public static let info = ReplyCodec<TaskInfo>(encode: { [.fields($0.fields)] }, decode: { try TaskInfo(bus: $0.dict()) })
    public static let infos = ReplyCodec<[TaskInfo]>(encode: { [.array($0.map { .fields($0.fields) }, elementType: "a{sv}")] },
                                                     decode: { try $0.array(of: "a{sv}") { try TaskInfo(bus: $0.dictValue ?? [:]) } })
    public static let rows = ReplyCodec<[TaskInfo]>(encode: { [.array($0.map(\.row), elementType: TaskInfo.rowType)] },
                                                    decode: { try $0.array(of: TaskInfo.rowType) { try TaskInfo(row: $0) }.compactMap { $0 } })
}

extension BusReader {
    /// A task id inside an array (`at`).
    static func taskID(_ v: Value) throws -> Int64 {
        guard case .uint64 = v, let id = v.int64Value else { throw FerryError(.invalidArgument, "a task id must be t, not \(v.typeString)") }
        return id
    }
}

/// Methods whose one argument is a session identifier.
public protocol SessionMethod: Agent1Method {
    var session: String { get }
    init(session: String)
}

extension SessionMethod {
    public var arguments: [Value] { [.string(session)] }
    public init(_ r: inout BusReader) throws { self.init(session: try r.string()) }
}

/// Methods whose one argument is a task id.
public protocol TaskMethod: Agent1Method {
    var task: Int64 { get }
    init(task: Int64)
}

extension TaskMethod {
    public var arguments: [Value] { [.uint64(UInt64(clamping: task))] }   // a negative id: 0, no such task
    public init(_ r: inout BusReader) throws { self.init(task: try r.task()) }
}

/// The namespace of the method types: `Agent1.GetTask(task: 7)`.
public enum Agent1 {}
