import FerryCore

/// One call of dev.ferry.Agent1: the method, its arguments packed as the interface XML says, and
/// how its reply unpacks. Made once here, sent blocking (`AgentProxy`, for the CLI and library)
/// or without blocking (`BusClient.send`, for the Downloads window's main loop).
public struct AgentCall<Reply>: @unchecked Sendable {
    public let method: AgentMethod
    public let args: [Value]
    public let decode: ([Value]) throws -> Reply
    /// Descriptors sent along, in the order of the `.handle` indices in `args` (not closed here).
    public let fds: [Int32]

    init(_ method: AgentMethod, _ args: [Value] = [], fds: [Int32] = [], _ decode: @escaping ([Value]) throws -> Reply) {
        self.method = method; self.args = args; self.fds = fds; self.decode = decode
    }
}

/// Every call the clients make, by name.
public enum AgentCalls {
    private static func id(_ reply: [Value]) -> Int64 { reply.first?.int64Value ?? 0 }
    private static func count(_ reply: [Value]) -> Int { Int(reply.first?.int64Value ?? 0) }
    private static func task(_ id: Int64) -> Value { .uint64(UInt64(id)) }
    private static func none(_ m: AgentMethod, _ args: [Value]) -> AgentCall<Void> { AgentCall(m, args) { _ in } }
    private static func rows(_ reply: [Value]) -> [TaskInfo] { (reply.first?.arrayValue ?? []).compactMap(TaskInfo.init(row:)) }

    public static func openSession(_ identifier: String, _ options: SessionOptions) -> AgentCall<OpenedSession> {
        AgentCall(.openSession, [.string(identifier), .dict(options.bus)]) { OpenedSession(bus: $0.first?.dictValue ?? [:]) }
    }
    /// The user's own session (the CLI's and the Downloads window's): no events kept, a failure
    /// is the task's end.
    public static var openUserSession: AgentCall<OpenedSession> {
        var options = SessionOptions()
        options.keepEvents = false
        return openSession(BusNames.cliSession, options)
    }
    public static func getSession(_ identifier: String) -> AgentCall<SessionInfo> {
        AgentCall(.getSession, [.string(identifier)]) { SessionInfo(bus: $0.first?.dictValue ?? [:]) }
    }
    public static func invalidateSession(_ identifier: String, cancelTasks: Bool) -> AgentCall<Void> {
        none(.invalidateSession, [.string(identifier), .bool(cancelTasks)])
    }
    public static func finishedHandlingEvents(_ identifier: String) -> AgentCall<Void> {
        none(.finishedHandlingEvents, [.string(identifier)])
    }

    public static func createDownload(session: String, url: String, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(.createDownload, [.string(session), .string(url), .dict(options.bus)], id)
    }
    public static func createDownloads(session: String, _ requests: [(url: String, options: TaskOptions)]) -> AgentCall<[Int64]> {
        let items = requests.map { Value.tuple([.string($0.url), .dict($0.options.bus)]) }
        return AgentCall(.createDownloads, [.string(session), .array(items, elementType: "(sa{sv})")]) {
            ($0.first?.arrayValue ?? []).compactMap(\.int64Value)
        }
    }
    public static func createDownload(session: String, resumeData: [UInt8], _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(.createDownloadFromResumeData, [.string(session), .bytes(resumeData), .dict(options.bus)], id)
    }
    public static func createUpload(session: String, url: String, file: String, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(.createUpload, [.string(session), .string(url), .string(file), .dict(options.bus)], id)
    }
    /// `fd`: an open, readable regular file; the agent copies it before it answers.
    public static func createUpload(session: String, url: String, fd: Int32, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(.createUploadFromFd, [.string(session), .string(url), .handle(0), .dict(options.bus)], fds: [fd], id)
    }

    public static func getTask(_ id: Int64) -> AgentCall<TaskInfo> {
        AgentCall(.getTask, [task(id)]) {
            guard let d = $0.first?.dictValue, let info = TaskInfo(d) else {
                throw FerryError(.failed, "unexpected GetTask reply from the agent")
            }
            return info
        }
    }
    /// A page of ListTaskRows: tasks with ids above `after`, ascending.
    public static func taskRows(session: String?, after: Int64, limit: Int) -> AgentCall<[TaskInfo]> {
        AgentCall(.listTaskRows, [.string(session ?? ""), .uint64(UInt64(after)), .uint32(UInt32(limit))], rows)
    }
    /// A page of one of the Downloads window's sections (see ListTaskRowsSection).
    public static func section(_ section: TaskSection, session: String?, offset: Int, limit: Int) -> AgentCall<[TaskInfo]> {
        AgentCall(.listTaskRowsSection, [.string(session ?? ""), .string(section.rawValue),
                                         .uint32(UInt32(offset)), .uint32(UInt32(limit))], rows)
    }

    public static func pause(_ id: Int64) -> AgentCall<Void> { none(.pause, [task(id)]) }
    public static func resume(_ id: Int64) -> AgentCall<Void> { none(.resume, [task(id)]) }
    public static func cancel(_ id: Int64) -> AgentCall<Void> { none(.cancel, [task(id)]) }
    public static func cancelProducingResumeData(_ id: Int64) -> AgentCall<[UInt8]> {
        AgentCall(.cancelProducingResumeData, [task(id)]) { $0.first?.bytesValue ?? [] }
    }
    public static func answerChallenge(_ id: Int64, _ answer: ChallengeReply) -> AgentCall<Void> {
        none(.answerChallenge, [task(id), .dict(answer.bus)])
    }

    public static func fetchEvents(session: String, after: UInt64, limit: Int) -> AgentCall<[FetchedEvent]> {
        AgentCall(.fetchEvents, [.string(session), .uint64(after), .uint32(UInt32(limit))]) {
            ($0.first?.arrayValue ?? []).compactMap(FetchedEvent.init(bus:))
        }
    }
    public static func acknowledgeEvents(session: String, upTo seq: UInt64) -> AgentCall<Void> {
        none(.acknowledgeEvents, [.string(session), .uint64(seq)])
    }

    public static var resetBadge: AgentCall<Void> { none(.resetBadge, []) }
    public static func removeTasks(_ ids: [Int64]) -> AgentCall<Void> {
        none(.removeTasks, [.array(ids.map(task), elementType: "t")])
    }
    public static func clearFinished(session: String?) -> AgentCall<Int> {
        AgentCall(.clearFinished, [.string(session ?? "")], count)
    }
    public static func pauseAll(session: String?) -> AgentCall<Int> { AgentCall(.pauseAll, [.string(session ?? "")], count) }
    public static func resumeAll(session: String?) -> AgentCall<Int> { AgentCall(.resumeAll, [.string(session ?? "")], count) }
    public static var status: AgentCall<AgentStatus> { AgentCall(.getStatus) { AgentStatus(bus: $0.first?.dictValue ?? [:]) } }
}

/// The Downloads window's two sections (ListTaskRowsSection).
public enum TaskSection: String, Sendable {
    /// Queued, running, waiting and paused tasks, oldest first.
    case active
    /// Completed, failed and canceled tasks, newest first.
    case ended
}
