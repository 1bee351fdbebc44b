import FerryCore

/// The bus side of a new task's options: which keys each kind takes, read and written as an a{sv}.
extension TaskOptions {
    /// Every key (a download takes them all): made once, not for each task of a batch.
    public static let allKeys = Set(Key.allCases)
    /// The keys an upload takes (no destination, no checksum).
    public static let uploadKeys: Set<Key> = [
        .description, .headers, .paused, .method, .earliestBegin, .priority, .maxRate, .maxAttempts, .timeout,
        .resumable,
    ]

    /// Refuses unknown keys and wrong types by name. Reads only the keys given (a batch's
    /// task usually has one or two of the thirteen), in the keys' order, so the error for a
    /// dictionary with two wrong values is always the same one.
    public init(bus d: [String: Value], allowed: Set<Key> = TaskOptions.allKeys, upload: Bool = false) throws {
        self.init()
        var given: [(key: Key, value: Value)] = []
        given.reserveCapacity(d.count)
        for (name, value) in d {
            guard let key = Key(rawValue: name), allowed.contains(key) else {
                throw FerryError(
                    .invalidArgument, upload ? "unknown upload option '\(name)'" : "unknown option '\(name)'")
            }
            given.append((key, value))
        }
        if given.count > 1 {
            given.sort { Key.allCases.firstIndex(of: $0.key)! < Key.allCases.firstIndex(of: $1.key)! }
        }
        for (key, v) in given {
            let name = key.rawValue
            switch key {
            case .directory: directory = try OptionValue.string(v, name)
            case .output: output = try OptionValue.string(v, name)
            case .sha256: sha256 = try OptionValue.string(v, name)
            case .description: description = try OptionValue.string(v, name)
            case .headers: headers = try OptionValue.stringDict(v, name)
            case .paused: paused = try OptionValue.bool(v, name)
            case .method: method = try OptionValue.string(v, name)
            case .earliestBegin: earliestBegin = Int64(try OptionValue.count(v, name))
            case .priority: priority = try OptionValue.double(v, name)
            case .maxRate: maxRate = Int64(try OptionValue.count(v, name))
            case .maxAttempts: maxAttempts = try OptionValue.count(v, name)
            case .timeout: timeout = try OptionValue.count(v, name)
            case .resumable: resumable = try OptionValue.string(v, name)
            }
        }
    }

    public var bus: [String: Value] {
        var d: [String: Value] = [:]
        if let v = directory { d[Key.directory.rawValue] = .string(v) }
        if let v = output { d[Key.output.rawValue] = .string(v) }
        if let v = sha256 { d[Key.sha256.rawValue] = .string(v) }
        if let v = description { d[Key.description.rawValue] = .string(v) }
        if let v = headers { d[Key.headers.rawValue] = .stringDict(v) }
        if let v = paused { d[Key.paused.rawValue] = .bool(v) }
        if let v = method { d[Key.method.rawValue] = .string(v) }
        if let v = earliestBegin { d[Key.earliestBegin.rawValue] = .int64(v) }
        if let v = priority { d[Key.priority.rawValue] = .double(v) }
        if let v = maxRate { d[Key.maxRate.rawValue] = .int64(v) }
        if let v = maxAttempts { d[Key.maxAttempts.rawValue] = .uint32(UInt32(clamping: v)) }
        if let v = timeout { d[Key.timeout.rawValue] = .uint32(UInt32(clamping: v)) }
        if let v = resumable { d[Key.resumable.rawValue] = .string(v) }
        return d
    }
}

/// GetStatus's reply.
public struct AgentStatus: Sendable, Equatable {
    public var version: String
    public var store: String
    public var pid: Int64
    /// Tasks per state (every state, zeros included).
    public var tasks: [TaskState: Int]
    public var running: Int
    public var badge: Int
    /// Where a store found damaged at this start was moved aside (nil: it was not).
    public var damagedStore: String?
    /// Where a download that names no folder goes (ferryd's --download-dir, else the setting,
    /// else the XDG download folder): host callers only.
    public var downloadFolder: String?
    public init(
        version: String, store: String, pid: Int64, tasks: [TaskState: Int], running: Int, badge: Int,
        damagedStore: String? = nil, downloadFolder: String? = nil
    ) {
        self.version = version; self.store = store; self.pid = pid; self.tasks = tasks; self.running = running;
        self.badge = badge; self.damagedStore = damagedStore; self.downloadFolder = downloadFolder
    }

    public var bus: [String: Value] {
        var counts: [String: Value] = [:]
        for s in TaskState.allCases { counts[s.rawValue] = .uint32(UInt32(clamping: tasks[s] ?? 0)) }
        return [
            Key.version.rawValue: .string(version), Key.store.rawValue: .string(store), Key.pid.rawValue: .int64(pid),
            Key.tasks.rawValue: .dict(counts), Key.running.rawValue: .uint32(UInt32(clamping: running)),
            Key.badge.rawValue: .uint32(UInt32(clamping: badge)),
        ].merging(damagedStore.map { [Key.damagedStore.rawValue: .string($0)] } ?? [:]) { a, _ in a }
            .merging(downloadFolder.map { [Key.downloadFolder.rawValue: .string($0)] } ?? [:]) { a, _ in a }
    }

    public init(bus d: [String: Value]) throws {
        let f = try BusFields<Key>(d, reading: "the agent's status")
        var counts: [TaskState: Int] = [:]
        for (k, v) in try f.dict(.tasks) {
            guard let n = v.int64Value else {
                throw FerryError(.invalidArgument, "the agent's status: tasks '\(k)' must be u")
            }
            if let s = TaskState(rawValue: k) { counts[s] = Int(n) }  // a newer agent's state: not this client's
        }
        self.init(
            version: try f.string(.version), store: try f.string(.store), pid: try f.int64(.pid),
            tasks: counts, running: try f.count(.running), badge: try f.count(.badge),
            damagedStore: f.optional(.damagedStore) { $0.stringValue },
            downloadFolder: f.optional(.downloadFolder) { $0.stringValue })
    }
}

/// AnswerChallenge's answer: user and password (and how long to keep them), or an action
/// (reject, cancel).
extension ChallengeReply {
    public var bus: [String: Value] {
        switch self {
        case .credential(let c, let persistence):
            var d: [String: Value] = [Key.user.rawValue: .string(c.user), Key.password.rawValue: .string(c.password)]
            if persistence != .none { d[Key.persistence.rawValue] = .string(persistence.rawValue) }
            return d
        case .reject: return [Key.action.rawValue: .string("reject")]
        case .cancel: return [Key.action.rawValue: .string("cancel")]
        }
    }

    public init(bus d: [String: Value]) throws {
        for key in d.keys where Key(rawValue: key) == nil {
            throw FerryError(.invalidArgument, "unknown answer key '\(key)'")
        }
        if let action = try OptionValue.string(d, Key.action.rawValue) {
            switch action {
            case "reject": self = .reject
            case "cancel": self = .cancel
            default: throw FerryError(.invalidArgument, "action must be reject or cancel, not '\(action.prefix(32))'")
            }
            return
        }
        guard let user = d[Key.user.rawValue]?.stringValue, let password = d[Key.password.rawValue]?.stringValue else {
            throw FerryError(.invalidArgument, "give user and password (strings), or action")
        }
        var persistence = CredentialPersistence.none
        if let p = try OptionValue.string(d, Key.persistence.rawValue) {
            guard let known = CredentialPersistence(rawValue: p) else {
                throw FerryError(
                    .invalidArgument, "persistence must be none, for-session or permanent, not '\(p.prefix(32))'")
            }
            persistence = known
        }
        self = .credential(Credential(user: user, password: password), persistence: persistence)
    }
}
