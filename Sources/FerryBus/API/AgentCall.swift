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

/// Every call the clients make, by name: a function per method, generated from the XML
/// (`AgentCalls.getTask(task: 7)`), and the calls that mean more than one method's arguments.
public enum AgentCalls {
    /// The user's own session (the CLI's and the Downloads window's): no events kept, a failure
    /// is the task's end.
    public static var openUserSession: AgentCall<OpenedSession> {
        var options = SessionOptions()
        options.keepEvents = false
        return openSession(identifier: BusNames.cliSession, configuration: options)
    }
}

/// The Downloads window's two sections (ListTaskRowsSection).
public enum TaskSection: String, Sendable {
    /// Queued, running, waiting and paused tasks, oldest first.
    case active
    /// Completed, failed and canceled tasks, newest first.
    case ended
}
