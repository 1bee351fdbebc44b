import FerryCore

/// One call of dev.ferry.Agent1 ready to send: its method, its arguments and how its reply
/// unpacks, all from the method's type in `Agent1`. Sent blocking (`AgentProxy`, for the CLI
/// and library) or without blocking (`BusClient.send`, for the Downloads window's main loop).
public struct AgentCall<Reply>: @unchecked Sendable {
    public let method: AgentMethod
    public let args: [Value]
    public let decode: ([Value]) throws -> Reply
    /// Descriptors sent along, in the order of the `.handle` indices in `args` (not closed here).
    public let fds: [Int32]

    public init<M: Agent1Method>(_ call: M, fds: [Int32] = []) where M.Reply == Reply {
        method = M.method
        args = call.arguments
        self.fds = fds
        decode = { try M.reply.decode($0, method: M.method) }
    }
}

/// Every call the clients make, by name.
public enum AgentCalls {
    public static func openSession(_ identifier: String, _ options: SessionOptions) -> AgentCall<OpenedSession> {
        AgentCall(Agent1.OpenSession(identifier: identifier, options: options))
    }
    /// The user's own session (the CLI's and the Downloads window's): no events kept, a failure
    /// is the task's end.
    public static var openUserSession: AgentCall<OpenedSession> {
        var options = SessionOptions()
        options.keepEvents = false
        return openSession(BusNames.cliSession, options)
    }
    public static func getSession(_ identifier: String) -> AgentCall<SessionInfo> { AgentCall(Agent1.GetSession(session: identifier)) }
    public static func invalidateSession(_ identifier: String, cancelTasks: Bool) -> AgentCall<Void> {
        AgentCall(Agent1.InvalidateSession(session: identifier, cancelTasks: cancelTasks))
    }
    public static func finishedHandlingEvents(_ identifier: String) -> AgentCall<Void> {
        AgentCall(Agent1.FinishedHandlingEvents(session: identifier))
    }

    public static func createDownload(session: String, url: String, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(Agent1.CreateDownload(session: session, url: url, options: options))
    }
    public static func createDownloads(session: String, _ requests: [(url: String, options: TaskOptions)]) -> AgentCall<[Int64]> {
        AgentCall(Agent1.CreateDownloads(session: session, requests: requests))
    }
    public static func createDownload(session: String, resumeData: [UInt8], _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(Agent1.CreateDownloadFromResumeData(session: session, resumeData: resumeData, options: options))
    }
    public static func createUpload(session: String, url: String, file: String, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(Agent1.CreateUpload(session: session, url: url, file: file, options: options))
    }
    /// `fd`: an open, readable regular file; the agent copies it before it answers.
    public static func createUpload(session: String, url: String, fd: Int32, _ options: TaskOptions) -> AgentCall<Int64> {
        AgentCall(Agent1.CreateUploadFromFd(session: session, url: url, fd: 0, options: options), fds: [fd])
    }

    public static func getTask(_ id: Int64) -> AgentCall<TaskInfo> { AgentCall(Agent1.GetTask(task: id)) }
    /// A page of ListTaskRows: tasks with ids above `after`, ascending.
    public static func taskRows(session: String?, after: Int64, limit: Int) -> AgentCall<[TaskInfo]> {
        AgentCall(Agent1.ListTaskRows(session: session ?? "", after: after, limit: limit))
    }
    /// A page of one of the Downloads window's sections (see ListTaskRowsSection).
    public static func section(_ section: TaskSection, session: String?, offset: Int, limit: Int) -> AgentCall<[TaskInfo]> {
        AgentCall(Agent1.ListTaskRowsSection(session: session ?? "", section: section, offset: offset, limit: limit))
    }

    public static func pause(_ id: Int64) -> AgentCall<Void> { AgentCall(Agent1.Pause(task: id)) }
    public static func resume(_ id: Int64) -> AgentCall<Void> { AgentCall(Agent1.Resume(task: id)) }
    public static func cancel(_ id: Int64) -> AgentCall<Void> { AgentCall(Agent1.Cancel(task: id)) }
    public static func cancelProducingResumeData(_ id: Int64) -> AgentCall<[UInt8]> {
        AgentCall(Agent1.CancelProducingResumeData(task: id))
    }
    public static func answerChallenge(_ id: Int64, _ answer: ChallengeReply) -> AgentCall<Void> {
        AgentCall(Agent1.AnswerChallenge(task: id, answer: answer))
    }

    public static func fetchEvents(session: String, after: UInt64, limit: Int) -> AgentCall<[FetchedEvent]> {
        AgentCall(Agent1.FetchEvents(session: session, after: after, limit: limit))
    }
    public static func acknowledgeEvents(session: String, upTo seq: UInt64) -> AgentCall<Void> {
        AgentCall(Agent1.AcknowledgeEvents(session: session, upTo: seq))
    }

    public static var resetBadge: AgentCall<Void> { AgentCall(Agent1.ResetBadge()) }
    public static func removeTasks(_ ids: [Int64]) -> AgentCall<Void> { AgentCall(Agent1.RemoveTasks(tasks: ids)) }
    public static func clearFinished(session: String?) -> AgentCall<Int> { AgentCall(Agent1.ClearFinished(session: session ?? "")) }
    public static func pauseAll(session: String?) -> AgentCall<Int> { AgentCall(Agent1.PauseAll(session: session ?? "")) }
    public static func resumeAll(session: String?) -> AgentCall<Int> { AgentCall(Agent1.ResumeAll(session: session ?? "")) }
    public static var status: AgentCall<AgentStatus> { AgentCall(Agent1.GetStatus()) }
}

/// The Downloads window's two sections (ListTaskRowsSection).
public enum TaskSection: String, Sendable {
    /// Queued, running, waiting and paused tasks, oldest first.
    case active
    /// Completed, failed and canceled tasks, newest first.
    case ended
}
