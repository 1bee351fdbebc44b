import FerryCore

/// A method of dev.ferry.Agent1 as both ends see it: its name, its arguments as typed fields
/// (written by a client with `arguments`, read by the agent with `init(_:)`), and its reply
/// (`reply`: written by the agent, read by the client). The types are generated from
/// desktop/dev.ferry.Agent1.xml at build time (`ferry-bus-codegen`, run by the BusCodegen
/// plugin): `Agent1.GetTask(task: 7)`.
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

    /// A call answered at once by `body` (the generated `Agent1Handler.handle` uses it).
    public static func answerNow(
        _ values: [Value], _ answer: (Result<[Value], Error>) -> Void, _ body: (Self) throws -> Reply
    ) {
        answer(Result { reply.encode(try body(try Self(arguments: values))) })
    }

    /// A call `body` answers later, once (after work off the loop).
    public static func answerLater(
        _ values: [Value], _ answer: @escaping (Result<[Value], Error>) -> Void,
        _ body: (Self, @escaping (Result<Reply, Error>) -> Void) -> Void
    ) {
        do {
            body(try Self(arguments: values)) { answer($0.map(reply.encode)) }
        } catch {
            answer(.failure(error))
        }
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

    /// A reply of one value.
    public init(_ codec: BusCodec<T>) {
        self.init(encode: { [codec.encode($0)] }, decode: codec.read)
    }

    public func decode(_ values: [Value], method: AgentMethod) throws -> T {
        var r = BusReader(values, reading: "the agent's \(method.rawValue) reply")
        return try read(&r)
    }
}

public enum Replies {
    /// A method with no out argument.
    public static let none = ReplyCodec<Void>(encode: { _ in [] }, decode: { _ in })
}

extension BusReader {
    /// A task id inside an array (`at`).
    static func taskID(_ v: Value) throws -> Int64 {
        guard case .uint64 = v, let id = v.int64Value else {
            throw FerryError(.invalidArgument, "a task id must be t, not \(v.typeString)")
        }
        return id
    }
}

/// The namespace of the method and signal types.
public enum Agent1 {}
