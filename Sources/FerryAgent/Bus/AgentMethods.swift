import FerryBus
import FerryCore
import Glibc

/// What each method of dev.ferry.Agent1 does: its typed arguments (read by the generated
/// `Agent1` types, in the XML's order) become the core's request, the core's reply becomes the
/// method's typed reply. `Agent1Handler` (generated) has a function per method, so a method
/// of the XML without one here does not build.
struct AgentMethods: Agent1Handler {
    unowned let bus: BusService
    var agent: Agent { bus.agent }

    func openSession(_ m: Agent1.OpenSession, _ c: CallContext) throws -> OpenedSession { try bus.openSession(m, c) }
    func getSession(_ m: Agent1.GetSession, _ c: CallContext) throws -> SessionInfo {
        try bus.run(.getSession(m.session), c).expect("a session") { $0.session }
    }
    func invalidateSession(_ m: Agent1.InvalidateSession, _ c: CallContext) throws {
        try bus.run(.invalidateSession(m.session, cancelTasks: m.cancelTasks), c).expect("nothing") { $0.isNone }
    }
    func finishedHandlingEvents(_ m: Agent1.FinishedHandlingEvents, _ c: CallContext) throws {
        try bus.run(.finishedHandlingEvents(m.session), c).expect("nothing") { $0.isNone }
    }
    func fetchEvents(_ m: Agent1.FetchEvents, _ c: CallContext) throws -> [FetchedEvent] {
        guard
            case .events(let events, let blobs) = try bus.run(
                .fetchEvents(session: m.session, after: m.afterSeq, limit: m.limit), c)
        else {
            throw FerryError(.failed, "internal error: FetchEvents got no events")
        }
        return events.map { FetchedEvent($0, resumeData: blobs[$0.task].map(agent.resumeSeal.seal)) }
    }
    func acknowledgeEvents(_ m: Agent1.AcknowledgeEvents, _ c: CallContext) throws {
        try bus.run(.acknowledgeEvents(session: m.session, upTo: m.upToSeq), c).expect("nothing") { $0.isNone }
    }
    func resetBadge(_ m: Agent1.ResetBadge, _ c: CallContext) throws {
        try bus.run(.resetBadge, c).expect("nothing") { $0.isNone }
    }
    func getStatus(_ m: Agent1.GetStatus, _ c: CallContext) throws -> AgentStatus { try bus.status(c) }
    func getVersion(_ m: Agent1.GetVersion, _ c: CallContext) throws -> String { FerryRelease.version }

    func createDownload(_ m: Agent1.CreateDownload, _ c: CallContext) throws -> Int64 {
        try bus.run(.createTasks(session: m.session, [try RequestDecoder.download(url: m.url, m.options)]), c).expect(
            "a task"
        ) { $0.taskID }
    }
    func createDownloads(_ m: Agent1.CreateDownloads, _ c: CallContext) throws -> [Int64] {
        guard !m.requests.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
        return try bus.run(.createTasks(session: m.session, try RequestDecoder.downloads(m.requests)), c).expect(
            "tasks"
        ) { $0.taskIDs }
    }
    func createDownloadFromResumeData(_ m: Agent1.CreateDownloadFromResumeData, _ c: CallContext) throws -> Int64 {
        let data = try agent.resumeSeal.check(m.resumeData)
        let draft = try RequestDecoder.download(url: data.url, m.options)
        let request = AgentRequest.createFromResumeData(
            session: m.session, data, draft,
            destinationGiven: draft.directory != nil || draft.output != nil)
        return try bus.run(request, c).expect("a task") { $0.taskID }
    }
    func createUpload(_ m: Agent1.CreateUpload, _ c: CallContext, _ answer: @escaping (Result<Int64, Error>) -> Void) {
        bus.upload(m, c, answer)
    }
    func createUploadFromFd(
        _ m: Agent1.CreateUploadFromFd, _ c: CallContext, _ answer: @escaping (Result<Int64, Error>) -> Void
    ) {
        bus.uploadFromDescriptor(m, c, answer)
    }

    func listTasks(_ m: Agent1.ListTasks, _ c: CallContext) throws -> [TaskInfo] {
        try bus.infos(bus.run(.listTasks(session: m.session, after: m.afterID, limit: m.limit), c), c)
    }
    func listTaskRows(_ m: Agent1.ListTaskRows, _ c: CallContext) throws -> [TaskInfo] {
        try bus.infos(bus.run(.listTasks(session: m.session, after: m.afterID, limit: m.limit), c), c)
    }
    func listTaskRowsSection(_ m: Agent1.ListTaskRowsSection, _ c: CallContext) throws -> [TaskInfo] {
        try bus.infos(
            bus.run(
                .listSection(session: m.session, active: m.section == .active, offset: m.offset, limit: m.limit), c), c)
    }
    func getTask(_ m: Agent1.GetTask, _ c: CallContext) throws -> TaskInfo {
        try bus.info(bus.run(.getTask(m.task), c).expect("a task") { $0.record }, c)
    }
    func pause(_ m: Agent1.Pause, _ c: CallContext) throws {
        try bus.run(.pause(m.task), c).expect("nothing") { $0.isNone }
    }
    func resume(_ m: Agent1.Resume, _ c: CallContext) throws {
        try bus.run(.resume(m.task), c).expect("nothing") { $0.isNone }
    }
    func cancel(_ m: Agent1.Cancel, _ c: CallContext) throws {
        try bus.run(.cancel(m.task), c).expect("nothing") { $0.isNone }
    }
    func cancelProducingResumeData(_ m: Agent1.CancelProducingResumeData, _ c: CallContext) throws -> [UInt8] {
        agent.resumeSeal.seal(
            try bus.run(.cancelProducingResumeData(m.task), c).expect("resume data") { $0.resumeBlob })
    }
    func answerChallenge(_ m: Agent1.AnswerChallenge, _ c: CallContext) throws {
        try bus.run(.answerChallenge(m.task, m.answer), c).expect("nothing") { $0.isNone }
    }
    func removeTasks(_ m: Agent1.RemoveTasks, _ c: CallContext) throws {
        try bus.run(.removeTasks(m.ids), c).expect("nothing") { $0.isNone }
    }
    func clearFinished(_ m: Agent1.ClearFinished, _ c: CallContext) throws -> Int {
        try bus.run(.clearFinished(session: m.session), c).expect("a count") { $0.number }
    }
    func pauseAll(_ m: Agent1.PauseAll, _ c: CallContext) throws -> Int {
        try bus.run(.pauseAll(session: m.session), c).expect("a count") { $0.number }
    }
    func resumeAll(_ m: Agent1.ResumeAll, _ c: CallContext) throws -> Int {
        try bus.run(.resumeAll(session: m.session), c).expect("a count") { $0.number }
    }
}

extension BusService {
    /// Hands a request to the core as the caller may make it: a sandboxed app's paths are
    /// checked against what it may use (`checkPaths` false: the agent chose them, as the copy of
    /// an uploaded descriptor), and the core sees whose request it is.
    func run(_ request: AgentRequest, _ c: CallContext, checkPaths: Bool = true) throws -> AgentReply {
        guard case .sandboxed(let app) = c.caller else { return try agent.request(request) }
        return try agent.request(.sandboxed(app, checkPaths ? try SandboxPaths.resolve(request, app) : request))
    }

    /// A task as the caller sees it: a sandboxed app learns no path of the agent's state (the
    /// copy of a file it uploads is the agent's), as GetStatus hides the store's.
    func info(_ r: TaskRecord, _ c: CallContext, app: String? = nil) -> TaskInfo {
        var info = TaskInfo(r, app: app ?? agent.app(ofSession: r.session))
        if c.caller != .host, let file = info.uploadFile, agent.state.contains(file) { info.uploadFile = nil }
        return info
    }
    func infos(_ reply: AgentReply, _ c: CallContext) throws -> [TaskInfo] {
        // Each session's app once a page, not once a row (the look-up reads the core's sessions
        // through the agent: a copy of the core's references each time).
        var apps: [String: String] = [:]
        return try reply.expect("tasks") { $0.records }.map { r in
            if apps[r.session] == nil { apps[r.session] = agent.app(ofSession: r.session) }
            return info(r, c, app: apps[r.session])
        }
    }

    func openSession(_ m: Agent1.OpenSession, _ c: CallContext) throws -> OpenedSession {
        try AgentCore.validateSessionIdentifier(m.identifier)
        let options = try RequestDecoder.sessionOptions(m.configuration)
        // Finished files wait here for the app (it moves them during didFinishDownloadingTo).
        if case .sandboxed(let app) = c.caller {
            // The app owns the folders on the way: made one by one, none through a link.
            _ = try ConfinedFolder(
                StateFolder.appInbox(appHome: app.home, session: m.identifier), creatingBelow: app.home)
        } else {
            let inbox = agent.state.inbox(m.identifier)
            guard Paths.mkdirAll(inbox, mode: 0o700) else {
                throw FerryError(.failed, "cannot create the session's inbox \(inbox)")
            }
        }
        guard
            case .session(let id, let created, let latest, let given) = try run(
                .openSession(m.identifier, options, peer: c.sender), c)
        else {
            throw FerryError(.failed, "internal error: OpenSession got no session")
        }
        return OpenedSession(identifier: id, created: created, latestSeq: latest, inbox: given)
    }

    func status(_ c: CallContext) throws -> AgentStatus {
        guard case .status(let counts, let running, let badge) = try run(.status, c) else {
            throw FerryError(.failed, "internal error: GetStatus got no status")
        }
        var tasks: [TaskState: Int] = [:]
        for (k, v) in counts { if let s = TaskState(rawValue: k) { tasks[s] = v } }
        // A sandboxed app learns nothing of the host's file system.
        let store = c.caller == .host ? agent.storePath : ""
        return AgentStatus(
            version: FerryRelease.version, store: store, pid: Int64(getpid()), tasks: tasks, running: running,
            badge: badge, damagedStore: c.caller == .host ? agent.damagedStore : nil)
    }
}
