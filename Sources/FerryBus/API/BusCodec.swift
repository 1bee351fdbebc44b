import FerryCore

/// How a value of one Swift type goes on the bus as one argument and comes back. The generated
/// method and signal types (from desktop/dev.ferry.Agent1.xml) name a codec per argument: the
/// XML's `dev.ferry.Swift.Codec` annotation, else the plain one of its signature.
public struct BusCodec<T>: Sendable {
    public let encode: @Sendable (T) -> Value
    public let read: @Sendable (inout BusReader) throws -> T
    @inlinable public init(
        encode: @escaping @Sendable (T) -> Value, read: @escaping @Sendable (inout BusReader) throws -> T
    ) {
        self.encode = encode
        self.read = read
    }
}

// The plain codecs of basic signatures.
extension BusCodec where T == String {
    public static var string: Self { .init(encode: { .string($0) }, read: { try $0.string() }) }
}
extension BusCodec where T == Bool {
    public static var bool: Self { .init(encode: { .bool($0) }, read: { try $0.bool() }) }
}
extension BusCodec where T == UInt64 {
    public static var uint64: Self { .init(encode: { .uint64($0) }, read: { try $0.uint64() }) }
}
extension BusCodec where T == [UInt8] {
    public static var bytes: Self { .init(encode: { .bytes($0) }, read: { try $0.bytes() }) }
}
extension BusCodec where T == [String] {
    public static var strings: Self { .init(encode: { .strings($0) }, read: { try $0.strings() }) }
}
/// h: the index of a descriptor sent with the message.
extension BusCodec where T == Int32 {
    public static var handle: Self { .init(encode: { .handle($0) }, read: { try $0.handle() }) }
}
/// u: a count or a limit.
extension BusCodec where T == Int {
    public static var count: Self { .init(encode: { .uint32(UInt32(clamping: $0)) }, read: { try $0.count() }) }
}
extension BusCodec where T == Int64 {
    public static var int64: Self { .init(encode: { .int64($0) }, read: { try $0.int64() }) }
    /// t: a task id (the agent's ids fit Int64; a negative one is sent as 0, no such task).
    public static var task: Self { .init(encode: { .uint64(UInt64(clamping: $0)) }, read: { try $0.task() }) }
}
extension BusCodec where T == [Int64] {
    /// at: task ids.
    public static var taskIDs: Self {
        .init(
            encode: { .array($0.map { .uint64(UInt64(clamping: $0)) }, elementType: "t") },
            read: { try $0.array(of: "t") { try BusReader.taskID($0) } })
    }
}

// The API's own types.
extension BusCodec where T == TaskOptions {
    /// A download's options: every key.
    public static var download: Self { .init(encode: { .dict($0.bus) }, read: { try TaskOptions(bus: $0.dict()) }) }
    /// An upload's options: no destination, no checksum.
    public static var upload: Self {
        .init(
            encode: { .dict($0.bus) },
            read: { try TaskOptions(bus: $0.dict(), allowed: TaskOptions.uploadKeys, upload: true) })
    }
}
extension BusCodec where T == [(url: String, options: TaskOptions)] {
    /// CreateDownloads' requests: an option of the wrong type in any request is refused before
    /// the requests are looked at in order, its error naming the request.
    public static var downloadRequests: Self {
        .init(
            encode: { .array($0.map { .tuple([.string($0.url), .dict($0.options.bus)]) }, elementType: "(sa{sv})") },
            read: { r in
                let items = try r.array(of: "(sa{sv})") { $0 }
                return try items.enumerated().map { index, item in
                    try BusReader.members(of: item, reading: "request \(index + 1)") { m in
                        let url = try m.string()
                        do { return (url, try TaskOptions(bus: m.dict())) } catch var e as FerryError
                            where items.count > 1
                        {
                            e.message = "request \(index + 1): \(e.message)"
                            throw e
                        }
                    }
                }
            })
    }
}
extension BusCodec where T: RawRepresentable, T.RawValue == String {
    /// A name on the wire; one the type does not know is refused with `unknown`'s words for it
    /// (given the name's first 32 characters).
    static func named(_ unknown: @escaping (Substring) -> String) -> Self {
        .init(
            encode: { .string($0.rawValue) },
            read: { r in
                let name = try r.string()
                guard let value = T(rawValue: name) else {
                    throw FerryError(.invalidArgument, unknown(name.prefix(32)))
                }
                return value
            })
    }
}
extension BusCodec where T == TaskSection {
    public static var section: Self { named { "unknown section \"\($0)\" (active or ended)" } }
}
extension BusCodec where T == TaskState {
    public static var state: Self { named { "unknown state \($0)" } }
}
extension BusCodec where T == TaskInfo {
    public static var info: Self { .init(encode: { .fields($0.fields) }, read: { try TaskInfo(bus: $0.dict()) }) }
}
extension BusCodec where T == [TaskInfo] {
    /// aa{sv}: ListTasks' dictionaries.
    public static var infos: Self {
        .init(
            encode: { .array($0.map { .fields($0.fields) }, elementType: "a{sv}") },
            read: { try $0.array(of: "a{sv}") { try TaskInfo(bus: $0.dictValue ?? [:]) } })
    }
    /// ListTaskRows' structs (a row of an unknown kind or state is left out).
    public static var rows: Self {
        .init(
            encode: { .array($0.map(\.row), elementType: TaskInfo.rowType) },
            read: { r in
                var tasks: [TaskInfo] = []  // appended as read: a compactMap would copy each task again
                _ = try r.array(of: TaskInfo.rowType) { if let t = try TaskInfo(row: $0) { tasks.append(t) } }
                return tasks
            })
    }
}
extension BusCodec where T == [FetchedEvent] {
    public static var events: Self {
        .init(
            encode: { .array($0.map(\.bus), elementType: FetchedEvent.type) },
            read: { try $0.array(of: FetchedEvent.type) { try FetchedEvent(bus: $0) }.compactMap { $0 } })
    }
}
extension BusCodec where T == [TaskProgress] {
    /// a(txx): (task, received, expected; -1 = unknown).
    public static var progress: Self {
        .init(
            encode: {
                .array(
                    $0.map { .tuple([.uint64(UInt64(clamping: $0.task)), .int64($0.received), .int64($0.expected)]) },
                    elementType: "(txx)")
            },
            read: { r in
                try r.array(of: "(txx)") { item in
                    try BusReader.members(of: item, reading: "TasksProgressed") { f in
                        TaskProgress(task: try f.task(), received: try f.int64(), expected: try f.int64())
                    }
                }
            })
    }
}
extension BusCodec where T == SessionOptions {
    public static var options: Self { .init(encode: { .dict($0.bus) }, read: { try SessionOptions(bus: $0.dict()) }) }
}
extension BusCodec where T == OpenedSession {
    public static var opened: Self { .init(encode: { .dict($0.bus) }, read: { try OpenedSession(bus: $0.dict()) }) }
}
extension BusCodec where T == SessionInfo {
    public static var info: Self { .init(encode: { .dict($0.bus) }, read: { try SessionInfo(bus: $0.dict()) }) }
}
extension BusCodec where T == AgentStatus {
    public static var status: Self { .init(encode: { .dict($0.bus) }, read: { try AgentStatus(bus: $0.dict()) }) }
}
extension BusCodec where T == ChallengeReply {
    public static var answer: Self { .init(encode: { .dict($0.bus) }, read: { try ChallengeReply(bus: $0.dict()) }) }
}
