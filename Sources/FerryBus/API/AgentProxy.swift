import FerryCore

/// The agent's API as Swift calls, for the library and the CLI: each method packs its
/// arguments and unpacks its reply in one place. Calls block (see `BusClient`).
public struct AgentProxy: Sendable {
    public let client: BusClient
    public init(_ client: BusClient) { self.client = client }

    private func call(_ m: AgentMethod, _ args: [Value] = []) throws -> [Value] { try client.call(m.rawValue, args) }
    private func id(_ reply: [Value]) -> Int64 { reply.first?.int64Value ?? 0 }

    @discardableResult
    public func openSession(_ identifier: String, _ options: SessionOptions) throws -> OpenedSession {
        OpenedSession(bus: try call(.openSession, [.string(identifier), .dict(options.bus)]).first?.dictValue ?? [:])
    }
    public func getSession(_ identifier: String) throws -> SessionInfo {
        SessionInfo(bus: try call(.getSession, [.string(identifier)]).first?.dictValue ?? [:])
    }
    public func invalidateSession(_ identifier: String, cancelTasks: Bool) throws {
        _ = try call(.invalidateSession, [.string(identifier), .bool(cancelTasks)])
    }
    public func finishedHandlingEvents(_ identifier: String) throws {
        _ = try call(.finishedHandlingEvents, [.string(identifier)])
    }

    public func createDownload(session: String, url: String, _ options: TaskOptions) throws -> Int64 {
        id(try call(.createDownload, [.string(session), .string(url), .dict(options.bus)]))
    }
    public func createDownloads(session: String, _ requests: [(url: String, options: TaskOptions)]) throws -> [Int64] {
        let items = requests.map { Value.tuple([.string($0.url), .dict($0.options.bus)]) }
        let reply = try call(.createDownloads, [.string(session), .array(items, elementType: "(sa{sv})")])
        return (reply.first?.arrayValue ?? []).compactMap(\.int64Value)
    }
    public func createDownload(session: String, resumeData: [UInt8], _ options: TaskOptions) throws -> Int64 {
        id(try call(.createDownloadFromResumeData, [.string(session), .bytes(resumeData), .dict(options.bus)]))
    }
    public func createUpload(session: String, url: String, file: String, _ options: TaskOptions) throws -> Int64 {
        id(try call(.createUpload, [.string(session), .string(url), .string(file), .dict(options.bus)]))
    }

    public func task(_ id: Int64) throws -> TaskInfo {
        guard let d = try call(.getTask, [.uint64(UInt64(id))]).first?.dictValue, let info = TaskInfo(d) else {
            throw FerryError(.failed, "unexpected GetTask reply from the agent")
        }
        return info
    }

    /// Every task (of one session, or all for nil), a page at a time as the agent sends them:
    /// a listing of 100,000 tasks never sits in memory whole. `body` returns false to stop.
    public func forEachPage(session: String?, pageSize: Int = 1000, _ body: ([TaskInfo]) throws -> Bool) throws {
        var after: UInt64 = 0
        while true {
            let reply = try call(.listTaskRows, [.string(session ?? ""), .uint64(after), .uint32(UInt32(pageSize))])
            let page = (reply.first?.arrayValue ?? []).compactMap(TaskInfo.init(row:))
            guard try body(page), page.count == pageSize, let last = page.last else { return }
            after = UInt64(last.id)
        }
    }

    public func allTasks(session: String?) throws -> [TaskInfo] {
        var out: [TaskInfo] = []
        try forEachPage(session: session) { out.append(contentsOf: $0); return true }
        return out
    }

    public func pause(_ id: Int64) throws { _ = try call(.pause, [.uint64(UInt64(id))]) }
    public func resume(_ id: Int64) throws { _ = try call(.resume, [.uint64(UInt64(id))]) }
    public func cancel(_ id: Int64) throws { _ = try call(.cancel, [.uint64(UInt64(id))]) }
    public func cancelProducingResumeData(_ id: Int64) throws -> [UInt8] {
        try call(.cancelProducingResumeData, [.uint64(UInt64(id))]).first?.bytesValue ?? []
    }
    public func answerChallenge(_ id: Int64, _ answer: ChallengeReply) throws {
        _ = try call(.answerChallenge, [.uint64(UInt64(id)), .dict(answer.bus)])
    }

    public func fetchEvents(session: String, after: UInt64, limit: Int) throws -> [FetchedEvent] {
        let reply = try call(.fetchEvents, [.string(session), .uint64(after), .uint32(UInt32(limit))])
        return (reply.first?.arrayValue ?? []).compactMap(FetchedEvent.init(bus:))
    }
    public func acknowledgeEvents(session: String, upTo seq: UInt64) throws {
        _ = try call(.acknowledgeEvents, [.string(session), .uint64(seq)])
    }

    public func resetBadge() throws { _ = try call(.resetBadge) }
    public func removeTasks(_ ids: [Int64]) throws {
        _ = try call(.removeTasks, [.array(ids.map { .uint64(UInt64($0)) }, elementType: "t")])
    }
    public func clearFinished(session: String?) throws -> Int {
        Int(try call(.clearFinished, [.string(session ?? "")]).first?.int64Value ?? 0)
    }
    /// Pauses every active task of a session (nil: all); how many.
    public func pauseAll(session: String?) throws -> Int {
        Int(try call(.pauseAll, [.string(session ?? "")]).first?.int64Value ?? 0)
    }
    /// Resumes every paused task of a session (nil: all); how many.
    public func resumeAll(session: String?) throws -> Int {
        Int(try call(.resumeAll, [.string(session ?? "")]).first?.int64Value ?? 0)
    }
    public func status() throws -> AgentStatus { AgentStatus(bus: try call(.getStatus).first?.dictValue ?? [:]) }
}
