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

    public init(_ r: TaskRecord, app: String = "") {
        self.app = app
        id = r.id; session = r.session; url = DownloadURL.printable(r.url); state = r.state
        kind = r.kind; method = r.effectiveMethod; uploadFile = r.uploadFile
        received = r.received; expected = r.expected; file = r.file; error = r.error; errorName = r.errorName
        reason = r.reason; description = r.description; attempts = r.attempts; retryAt = r.retryAt
        created = r.created; updated = r.updated
    }

    public var dictionary: [String: Value] {
        var d: [String: Value] = [
            "id": .uint64(UInt64(id)), "session": .string(session), "url": .string(url),
            "state": .string(state.rawValue), "received": .int64(received), "expected": .int64(expected ?? -1),
            "file": .string(file ?? ""), "error": .string(error ?? ""), "error-name": .string(errorName ?? ""),
            "reason": .string(reason?.rawValue ?? ""), "description": .string(description),
            "attempts": .uint32(UInt32(clamping: attempts)), "created": .int64(created), "updated": .int64(updated),
        ]
        if let retryAt { d["retry-at"] = .int64(retryAt) }
        d["kind"] = .string(kind.rawValue)
        d["app"] = .string(app)
        d["method"] = .string(method)
        if let uploadFile { d["upload-file"] = .string(uploadFile) }
        return d
    }

    /// One element of ListTaskRows: the fields of `dictionary`, in the interface's order.
    public static let rowType = "(tssssssxxsssssuxxx)"

    public var row: Value {
        .tuple([.uint64(UInt64(id)), .string(session), .string(kind.rawValue), .string(url), .string(method),
                .string(uploadFile ?? ""), .string(state.rawValue), .int64(received), .int64(expected ?? -1),
                .string(file ?? ""), .string(error ?? ""), .string(errorName ?? ""), .string(reason?.rawValue ?? ""),
                .string(description), .uint32(UInt32(clamping: attempts)), .int64(retryAt ?? -1),
                .int64(created), .int64(updated)])
    }

    public init?(row: Value) {
        guard let f = row.tupleValue, f.count == 18, let id = f[0].int64Value,
              let state = f[6].stringValue.flatMap(TaskState.init(rawValue:)) else { return nil }
        func s(_ i: Int) -> String? { f[i].stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        func x(_ i: Int) -> Int64? { f[i].int64Value.flatMap { $0 < 0 ? nil : $0 } }
        self.id = id
        self.state = state
        session = f[1].stringValue ?? ""
        kind = s(2).flatMap(TaskRecord.Kind.init(rawValue:)) ?? .download
        url = f[3].stringValue ?? ""
        method = s(4) ?? "GET"
        uploadFile = s(5)
        received = f[7].int64Value ?? 0
        expected = x(8)
        file = s(9)
        error = s(10)
        errorName = s(11)
        reason = s(12).flatMap(WaitReason.init(rawValue:))
        description = f[13].stringValue ?? ""
        attempts = Int(f[14].int64Value ?? 0)
        retryAt = x(15)
        created = f[16].int64Value ?? 0
        updated = f[17].int64Value ?? 0
    }

    public init?(_ d: [String: Value]) {
        guard let id = d["id"]?.int64Value, let stateName = d["state"]?.stringValue,
              let state = TaskState(rawValue: stateName) else { return nil }
        self.id = id
        self.state = state
        session = d["session"]?.stringValue ?? ""
        kind = d["kind"]?.stringValue.flatMap(TaskRecord.Kind.init(rawValue:)) ?? .download
        method = d["method"]?.stringValue ?? "GET"
        uploadFile = d["upload-file"]?.stringValue
        app = d["app"]?.stringValue ?? ""
        url = d["url"]?.stringValue ?? ""
        received = d["received"]?.int64Value ?? 0
        expected = d["expected"]?.int64Value.flatMap { $0 < 0 ? nil : $0 }
        file = d["file"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        error = d["error"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        errorName = d["error-name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        reason = d["reason"]?.stringValue.flatMap { WaitReason(rawValue: $0) }
        description = d["description"]?.stringValue ?? ""
        attempts = Int(d["attempts"]?.int64Value ?? 0)
        retryAt = d["retry-at"]?.int64Value
        created = d["created"]?.int64Value ?? 0
        updated = d["updated"]?.int64Value ?? 0
    }
}
