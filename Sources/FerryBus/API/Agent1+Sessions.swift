import FerryCore

/// dev.ferry.Agent1's methods about sessions, their events and the agent as a whole.
extension Agent1 {
    public struct OpenSession: Agent1Method {
        public static let method = AgentMethod.openSession
        public static let reply = ReplyCodec<OpenedSession>(encode: { [.dict($0.bus)] }, decode: { OpenedSession(bus: try $0.dict()) })
        public var identifier: String
        public var options: SessionOptions
        public init(identifier: String, options: SessionOptions) { self.identifier = identifier; self.options = options }
        public var arguments: [Value] { [.string(identifier), .dict(options.bus)] }
        public init(_ r: inout BusReader) throws {
            identifier = try r.string()
            options = try SessionOptions(bus: r.dict())
        }
    }

    public struct GetSession: SessionMethod {
        public static let method = AgentMethod.getSession
        public static let reply = ReplyCodec<SessionInfo>(encode: { [.dict($0.bus)] }, decode: { SessionInfo(bus: try $0.dict()) })
        public var session: String
        public init(session: String) { self.session = session }
    }

    public struct InvalidateSession: Agent1Method {
        public static let method = AgentMethod.invalidateSession
        public static let reply = Replies.none
        public var session: String
        public var cancelTasks: Bool
        public init(session: String, cancelTasks: Bool) { self.session = session; self.cancelTasks = cancelTasks }
        public var arguments: [Value] { [.string(session), .bool(cancelTasks)] }
        public init(_ r: inout BusReader) throws { session = try r.string(); cancelTasks = try r.bool() }
    }

    public struct FinishedHandlingEvents: SessionMethod {
        public static let method = AgentMethod.finishedHandlingEvents
        public static let reply = Replies.none
        public var session: String
        public init(session: String) { self.session = session }
    }

    public struct FetchEvents: Agent1Method {
        public static let method = AgentMethod.fetchEvents
        public static let reply = ReplyCodec<[FetchedEvent]>(
            encode: { [.array($0.map(\.bus), elementType: FetchedEvent.type)] },
            decode: { try $0.array(of: FetchedEvent.type) { try FetchedEvent(bus: $0) }.compactMap { $0 } })
        public var session: String
        public var after: UInt64
        public var limit: Int
        public init(session: String, after: UInt64, limit: Int) { self.session = session; self.after = after; self.limit = limit }
        public var arguments: [Value] { [.string(session), .uint64(after), .uint32(UInt32(clamping: limit))] }
        public init(_ r: inout BusReader) throws { session = try r.string(); after = try r.uint64(); limit = try r.count() }
    }

    public struct AcknowledgeEvents: Agent1Method {
        public static let method = AgentMethod.acknowledgeEvents
        public static let reply = Replies.none
        public var session: String
        public var upTo: UInt64
        public init(session: String, upTo: UInt64) { self.session = session; self.upTo = upTo }
        public var arguments: [Value] { [.string(session), .uint64(upTo)] }
        public init(_ r: inout BusReader) throws { session = try r.string(); upTo = try r.uint64() }
    }

    public struct ResetBadge: Agent1Method {
        public static let method = AgentMethod.resetBadge
        public static let reply = Replies.none
        public init() {}
        public var arguments: [Value] { [] }
        public init(_ r: inout BusReader) throws {}
    }

    public struct GetStatus: Agent1Method {
        public static let method = AgentMethod.getStatus
        public static let reply = ReplyCodec<AgentStatus>(encode: { [.dict($0.bus)] }, decode: { AgentStatus(bus: try $0.dict()) })
        public init() {}
        public var arguments: [Value] { [] }
        public init(_ r: inout BusReader) throws {}
    }
}
