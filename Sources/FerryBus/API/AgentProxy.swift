import FerryCore

/// The agent's API as blocking Swift calls, for the library and the CLI (the calls themselves
/// are spelled once, in `AgentCalls`). Calls block (see `BusClient`).
public struct AgentProxy: Sendable {
    public let client: BusClient
    public init(_ client: BusClient) { self.client = client }

    public func perform<Reply>(_ call: AgentCall<Reply>) throws -> Reply {
        try call.decode(try client.call(call.method.rawValue, call.args, fds: call.fds))
    }

    @discardableResult
    public func openSession(_ identifier: String, _ options: SessionOptions) throws -> OpenedSession {
        try perform(AgentCalls.openSession(identifier, options))
    }
    public func getSession(_ identifier: String) throws -> SessionInfo { try perform(AgentCalls.getSession(identifier)) }
    public func invalidateSession(_ identifier: String, cancelTasks: Bool) throws {
        try perform(AgentCalls.invalidateSession(identifier, cancelTasks: cancelTasks))
    }
    public func finishedHandlingEvents(_ identifier: String) throws { try perform(AgentCalls.finishedHandlingEvents(identifier)) }

    public func createDownload(session: String, url: String, _ options: TaskOptions) throws -> Int64 {
        try perform(AgentCalls.createDownload(session: session, url: url, options))
    }
    public func createDownloads(session: String, _ requests: [(url: String, options: TaskOptions)]) throws -> [Int64] {
        try perform(AgentCalls.createDownloads(session: session, requests))
    }
    public func createDownload(session: String, resumeData: [UInt8], _ options: TaskOptions) throws -> Int64 {
        try perform(AgentCalls.createDownload(session: session, resumeData: resumeData, options))
    }
    public func createUpload(session: String, url: String, file: String, _ options: TaskOptions) throws -> Int64 {
        try perform(AgentCalls.createUpload(session: session, url: url, file: file, options))
    }

    public func createUpload(session: String, url: String, fd: Int32, _ options: TaskOptions) throws -> Int64 {
        try perform(AgentCalls.createUpload(session: session, url: url, fd: fd, options))
    }

    public func task(_ id: Int64) throws -> TaskInfo { try perform(AgentCalls.getTask(id)) }

    /// Every task (of one session, or all for nil), a page at a time as the agent sends them:
    /// a listing of 100,000 tasks never sits in memory whole. `body` returns false to stop.
    /// The next page is asked for before `body` gets this one: the agent builds it while the
    /// caller prints (on two cores a long listing takes about the longer of the two, not both).
    public func forEachPage(session: String?, pageSize: Int = 1000, _ body: ([TaskInfo]) throws -> Bool) throws {
        let proxy = self
        func page(after: Int64) -> Prefetched<[TaskInfo]> {
            Prefetched { try proxy.perform(AgentCalls.taskRows(session: session, after: after, limit: pageSize)) }
        }
        var next = page(after: 0)
        while true {
            let current = try next.value()
            let more = current.count == pageSize && current.last != nil
            if more { next = page(after: current.last!.id) }
            guard try body(current), more else { return }
        }
    }

    public func allTasks(session: String?) throws -> [TaskInfo] {
        var out: [TaskInfo] = []
        try forEachPage(session: session) { out.append(contentsOf: $0); return true }
        return out
    }

    public func pause(_ id: Int64) throws { try perform(AgentCalls.pause(id)) }
    public func resume(_ id: Int64) throws { try perform(AgentCalls.resume(id)) }
    public func cancel(_ id: Int64) throws { try perform(AgentCalls.cancel(id)) }
    public func cancelProducingResumeData(_ id: Int64) throws -> [UInt8] { try perform(AgentCalls.cancelProducingResumeData(id)) }
    public func answerChallenge(_ id: Int64, _ answer: ChallengeReply) throws { try perform(AgentCalls.answerChallenge(id, answer)) }

    public func fetchEvents(session: String, after: UInt64, limit: Int) throws -> [FetchedEvent] {
        try perform(AgentCalls.fetchEvents(session: session, after: after, limit: limit))
    }
    public func acknowledgeEvents(session: String, upTo seq: UInt64) throws {
        try perform(AgentCalls.acknowledgeEvents(session: session, upTo: seq))
    }

    public func resetBadge() throws { try perform(AgentCalls.resetBadge) }
    public func removeTasks(_ ids: [Int64]) throws { try perform(AgentCalls.removeTasks(ids)) }
    public func clearFinished(session: String?) throws -> Int { try perform(AgentCalls.clearFinished(session: session)) }
    /// Pauses every active task of a session (nil: all); how many.
    public func pauseAll(session: String?) throws -> Int { try perform(AgentCalls.pauseAll(session: session)) }
    /// Resumes every paused task of a session (nil: all); how many.
    public func resumeAll(session: String?) throws -> Int { try perform(AgentCalls.resumeAll(session: session)) }
    public func status() throws -> AgentStatus { try perform(AgentCalls.status) }
}
