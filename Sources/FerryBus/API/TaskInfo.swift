import FerryCore

/// The task as the API shows it (a{sv} over D-Bus, JSON in the CLI).
public struct TaskInfo: Sendable, Equatable {
    public var id: Int64
    public var session: String
    public var kind: TaskRecord.Kind
    public var url: String
    public var method: String
    public var uploadFile: String?
    public var state: TaskState
    public var received: Int64
    public var expected: Int64?
    public var file: String?
    public var error: String?
    public var errorName: String?
    public var reason: WaitReason?
    public var description: String
    public var attempts: Int
    public var retryAt: Int64?
    public var created: Int64
    public var updated: Int64
    /// The sandboxed app the task belongs to (empty: the host's). In GetTask and ListTasks only.
    public var app: String = ""
    /// 0 to 1; and the task's own speed limit (nil: none). In GetTask and ListTasks only.
    public var priority: Double = 0.5
    public var maxRate: Int64?
    /// An upload's reply from the server (its file in the inbox, HTTP status, cut at 1 MiB).
    public var replyFile: String?
    public var replyStatus: Int?
    public var replyCut = false
    public var replyHeaders: [String: String]?

    public init(_ r: TaskRecord, app: String = "") {
        self.app = app
        id = r.id; session = r.session; url = DownloadURL.printable(r.url); state = r.state
        kind = r.kind; method = r.effectiveMethod; uploadFile = r.uploadFile
        received = r.received; expected = r.expected; file = r.file; error = r.error; errorName = r.errorName
        reason = r.reason; description = r.description; attempts = r.attempts; retryAt = r.retryAt
        created = r.created; updated = r.updated
        priority = r.priority; maxRate = r.maxRate
        replyFile = r.replyFile; replyStatus = r.replyStatus; replyCut = r.replyCut; replyHeaders = r.replyHeaders
    }

    public var dictionary: [String: Value] { Value.fields(fields).dictValue ?? [:] }

    /// The entries of `dictionary` in key order, as the agent writes them (no hashing, no sort).
    public var fields: [Value.Field] {
        var f: [Value.Field] = [
            .init(Key.app, .string(app)), .init(Key.attempts, .uint32(UInt32(clamping: attempts))),
            .init(Key.created, .int64(created)), .init(Key.description, .string(description)),
            .init(Key.error, .string(error ?? "")), .init(Key.errorName, .string(errorName ?? "")),
            .init(Key.expected, .int64(expected ?? -1)), .init(Key.file, .string(file ?? "")),
            .init(Key.id, .uint64(UInt64(id))), .init(Key.kind, .string(kind.rawValue)),
        ]
        f.reserveCapacity(21)
        if let maxRate { f.append(.init(Key.maxRate, .int64(maxRate))) }  // the defaults stay out of every page
        f.append(.init(Key.method, .string(method)))
        if priority != 0.5 { f.append(.init(Key.priority, .double(priority))) }
        f += [.init(Key.reason, .string(reason?.rawValue ?? "")), .init(Key.received, .int64(received))]
        if let replyStatus {  // an upload the server answered
            f += [
                .init(Key.replyCut, .bool(replyCut)), .init(Key.replyFile, .string(replyFile ?? "")),
                .init(Key.replyHeaders, .stringDict(replyHeaders ?? [:])),
                .init(Key.replyStatus, .int32(Int32(clamping: replyStatus))),
            ]
        }
        if let retryAt { f.append(.init(Key.retryAt, .int64(retryAt))) }
        f += [
            .init(Key.session, .string(session)), .init(Key.state, .string(state.rawValue)),
            .init(Key.updated, .int64(updated)),
        ]
        if let uploadFile { f.append(.init(Key.uploadFile, .string(uploadFile))) }
        f.append(.init(Key.url, .string(url)))
        return f
    }

    /// One element of ListTaskRows: the fields of `dictionary`, in the interface's order.
    public static let rowType = "(tssssssxxsssssuxxx)"

    public var row: Value {
        .tuple([
            .uint64(UInt64(id)), .string(session), .string(kind.rawValue), .string(url), .string(method),
            .string(uploadFile ?? ""), .string(state.rawValue), .int64(received), .int64(expected ?? -1),
            .string(file ?? ""), .string(error ?? ""), .string(errorName ?? ""), .string(reason?.rawValue ?? ""),
            .string(description), .uint32(UInt32(clamping: attempts)), .int64(retryAt ?? -1),
            .int64(created), .int64(updated),
        ])
    }

    /// nil for a state this client does not know (a newer agent's); a malformed row throws.
    public init?(row: Value) throws {
        func text(_ s: String) -> String? { s.isEmpty ? nil : s }
        func size(_ x: Int64) -> Int64? { x < 0 ? nil : x }
        let read: TaskInfo? = try BusReader.members(of: row, reading: "a task row") { f in
            let id = try f.task(), session = try f.string(), kind = try f.string(), url = try f.string()
            let method = try f.string(), uploadFile = try f.string(), state = try f.string()
            let received = try f.int64(), expected = try f.int64(), file = try f.string(), error = try f.string()
            let errorName = try f.string(), reason = try f.string(), description = try f.string(),
                attempts = try f.count()
            let retryAt = try f.int64(), created = try f.int64(), updated = try f.int64()
            guard let state = TaskState(rawValue: state) else { return nil }
            return TaskInfo(
                id: id, session: session, kind: TaskRecord.Kind(rawValue: kind) ?? .download, url: url,
                method: text(method) ?? "GET", uploadFile: text(uploadFile), state: state, received: received,
                expected: size(expected), file: text(file), error: text(error), errorName: text(errorName),
                reason: WaitReason(rawValue: reason), description: description, attempts: attempts,
                retryAt: size(retryAt), created: created, updated: updated)
        }
        guard let read else { return nil }
        self = read
    }

    /// Every field, as a row and a dictionary carry them.
    init(
        id: Int64, session: String, kind: TaskRecord.Kind, url: String, method: String, uploadFile: String?,
        state: TaskState,
        received: Int64, expected: Int64?, file: String?, error: String?, errorName: String?, reason: WaitReason?,
        description: String, attempts: Int, retryAt: Int64?, created: Int64, updated: Int64, app: String = ""
    ) {
        self.id = id; self.session = session; self.kind = kind; self.url = url; self.method = method
        self.uploadFile = uploadFile; self.state = state; self.received = received; self.expected = expected
        self.file = file; self.error = error; self.errorName = errorName; self.reason = reason
        self.description = description; self.attempts = attempts; self.retryAt = retryAt
        self.created = created; self.updated = updated; self.app = app
    }

    /// GetTask's and ListTasks' dictionary: every key the XML says is always sent, each of its
    /// type (an unknown kind or state, a newer agent's, is refused too).
    public init(bus d: [String: Value]) throws {
        let f = try BusFields<Key>(d, reading: "a task")
        let stateName = try f.string(.state), kindName = try f.string(.kind)
        guard let state = TaskState(rawValue: stateName), let kind = TaskRecord.Kind(rawValue: kindName) else {
            throw FerryError(
                .invalidArgument, "a task of an unknown state or kind (\(stateName.prefix(16)), \(kindName.prefix(16)))"
            )
        }
        func size(_ x: Int64) -> Int64? { x < 0 ? nil : x }
        self.init(
            id: try f.value(.id) { if case .uint64 = $0 { $0.int64Value } else { nil } },
            session: try f.string(.session),
            kind: kind, url: try f.string(.url), method: try f.string(.method),
            uploadFile: f.optional(.uploadFile) { $0.stringValue },
            state: state, received: try f.int64(.received), expected: size(try f.int64(.expected)),
            file: try f.text(.file),
            error: try f.text(.error), errorName: try f.text(.errorName),
            reason: WaitReason(rawValue: try f.string(.reason)),
            description: try f.string(.description), attempts: try f.count(.attempts),
            retryAt: f.optional(.retryAt) { $0.int64Value },
            created: try f.int64(.created), updated: try f.int64(.updated), app: try f.string(.app))
        // absent: the default, 0.5
        priority = f.optional(.priority) { if case .double(let p) = $0 { p } else { nil } } ?? 0.5
        maxRate = f.optional(.maxRate) { $0.int64Value }
        replyFile = f.optional(.replyFile) { $0.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        replyStatus = f.optional(.replyStatus) { $0.int64Value.map { Int($0) } }
        replyCut = f.optional(.replyCut) { $0.boolValue } ?? false
        replyHeaders = f.optional(.replyHeaders) { $0.stringDictValue }
    }
}
