import FerryCore

/// The agent's API as blocking Swift calls, for the library and the CLI: a function per method,
/// generated from the XML (`proxy.getTask(task: 7)`), and paging over a long listing here.
/// Calls block (see `BusClient`).
public struct AgentProxy: Sendable {
    public let client: BusClient
    /// Makes the calls that pass no descriptor instead of `client` (the CLI's sd-bus connection,
    /// which reads a long listing's replies without GDBus's GVariants).
    let transport: (@Sendable (_ method: String, _ args: [Value]) throws -> [Value])?

    public init(_ client: BusClient, transport: (@Sendable (String, [Value]) throws -> [Value])? = nil) {
        self.client = client
        self.transport = transport
    }

    public func perform<Reply>(_ call: AgentCall<Reply>) throws -> Reply {
        if let transport, call.fds.isEmpty { return try call.decode(try transport(call.method.rawValue, call.args)) }
        return try call.decode(try client.call(call.method.rawValue, call.args, fds: call.fds))
    }

    /// Every task (of one session, or all for nil), a page at a time as the agent sends them:
    /// a listing of 100,000 tasks never sits in memory whole. `body` returns false to stop.
    /// The next page is asked for before `body` gets this one: the agent builds it while the
    /// caller prints (on two cores a long listing takes about the longer of the two, not both).
    public func forEachPage(session: String?, pageSize: Int = 1000, _ body: ([TaskInfo]) throws -> Bool) throws {
        let proxy = self
        func page(after: Int64) -> Prefetched<[TaskInfo]> {
            Prefetched { try proxy.listTaskRows(session: session ?? "", afterID: after, limit: pageSize) }
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
        try forEachPage(session: session) {
            out.append(contentsOf: $0); return true
        }
        return out
    }
}
