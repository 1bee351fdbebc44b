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
        try bus.run(GetSession(m.session), c)
    }
    func invalidateSession(_ m: Agent1.InvalidateSession, _ c: CallContext) throws {
        try bus.run(InvalidateSession(m.session, cancelTasks: m.cancelTasks), c)
    }
    func finishedHandlingEvents(_ m: Agent1.FinishedHandlingEvents, _ c: CallContext) throws {
        try bus.run(FinishedHandlingEvents(m.session), c)
    }
    func fetchEvents(_ m: Agent1.FetchEvents, _ c: CallContext) throws -> [FetchedEvent] {
        let page = try bus.run(FetchEvents(session: m.session, after: m.afterSeq, limit: m.limit), c)
        return page.events.map { FetchedEvent($0, resumeData: page.resumeData[$0.task].map(agent.resumeSeal.seal)) }
    }
    func acknowledgeEvents(_ m: Agent1.AcknowledgeEvents, _ c: CallContext) throws {
        try bus.run(AcknowledgeEvents(session: m.session, upTo: m.upToSeq), c)
    }
    func resetBadge(_ m: Agent1.ResetBadge, _ c: CallContext) throws { try bus.run(ResetBadge(), c) }
    func getStatus(_ m: Agent1.GetStatus, _ c: CallContext) throws -> AgentStatus { try bus.status(c) }
    func getVersion(_ m: Agent1.GetVersion, _ c: CallContext) throws -> String { FerryRelease.version }

    func createDownload(_ m: Agent1.CreateDownload, _ c: CallContext) throws -> Int64 {
        try bus.run(CreateTasks(session: m.session, [try RequestDecoder.download(url: m.url, m.options)]), c)[0]
    }
    func createDownloads(_ m: Agent1.CreateDownloads, _ c: CallContext) throws -> [Int64] {
        guard !m.requests.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
        return try bus.run(CreateTasks(session: m.session, try RequestDecoder.downloads(m.requests)), c)
    }
    func createDownloadFromResumeData(_ m: Agent1.CreateDownloadFromResumeData, _ c: CallContext) throws -> Int64 {
        let data = try agent.resumeSeal.check(m.resumeData)
        let draft = try RequestDecoder.download(url: data.url, m.options)
        let request = CreateFromResumeData(
            session: m.session, data, draft, destinationGiven: draft.directory != nil || draft.output != nil)
        return try bus.run(request, c)
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
        bus.infos(try bus.run(ListTasks(session: m.session, after: m.afterID, limit: m.limit), c), c)
    }
    func listTaskRows(_ m: Agent1.ListTaskRows, _ c: CallContext) throws -> [TaskInfo] {
        bus.infos(try bus.run(ListTasks(session: m.session, after: m.afterID, limit: m.limit), c), c)
    }
    func listTaskRowsSection(_ m: Agent1.ListTaskRowsSection, _ c: CallContext) throws -> [TaskInfo] {
        let section = ListSection(session: m.session, active: m.section == .active, offset: m.offset, limit: m.limit)
        return bus.infos(try bus.run(section, c), c)
    }
    func getTask(_ m: Agent1.GetTask, _ c: CallContext) throws -> TaskInfo {
        bus.info(try bus.run(GetTask(m.task), c), c)
    }
    func pause(_ m: Agent1.Pause, _ c: CallContext) throws { try bus.run(TaskControl(.pause, m.task), c) }
    func resume(_ m: Agent1.Resume, _ c: CallContext) throws { try bus.run(TaskControl(.resume, m.task), c) }
    func cancel(_ m: Agent1.Cancel, _ c: CallContext) throws { try bus.run(TaskControl(.cancel, m.task), c) }
    func setURL(_ m: Agent1.SetURL, _ c: CallContext) throws -> Bool {
        let (url, host) = try TaskDraft.checkedURL(m.url, RequestDecoder.lookups)
        return try bus.run(SetTaskURL(m.task, url: url, host: host), c)
    }
    func cancelProducingResumeData(_ m: Agent1.CancelProducingResumeData, _ c: CallContext) throws -> [UInt8] {
        agent.resumeSeal.seal(try bus.run(CancelProducingResumeData(m.task), c))
    }
    func answerChallenge(_ m: Agent1.AnswerChallenge, _ c: CallContext) throws {
        try bus.run(AnswerChallenge(m.task, m.answer), c)
    }
    func removeTasks(_ m: Agent1.RemoveTasks, _ c: CallContext) throws { try bus.run(RemoveTasks(m.ids), c) }
    func clearFinished(_ m: Agent1.ClearFinished, _ c: CallContext) throws -> Int {
        try bus.run(SessionWide(.clearFinished, session: m.session), c)
    }
    func pauseAll(_ m: Agent1.PauseAll, _ c: CallContext) throws -> Int {
        try bus.run(SessionWide(.pauseAll, session: m.session), c)
    }
    func resumeAll(_ m: Agent1.ResumeAll, _ c: CallContext) throws -> Int {
        try bus.run(SessionWide(.resumeAll, session: m.session), c)
    }
}

extension BusService {
    /// Hands a request to the core as the caller may make it: a sandboxed app's paths are
    /// checked against what it may use (`checkPaths` false: the agent chose them, as the copy of
    /// an uploaded descriptor), and the core sees whose request it is.
    @discardableResult
    func run<R: CoreRequest>(_ request: R, _ c: CallContext, checkPaths: Bool = true) throws -> R.Reply {
        guard case .sandboxed(let app) = c.caller else { return try agent.request(request) }
        return try agent.request(checkPaths ? try SandboxPaths.resolve(request, app) : request, from: app)
    }

    /// A task as the caller sees it: a sandboxed app learns no path of the agent's state (the
    /// copy of a file it uploads is the agent's), as GetStatus hides the store's.
    func info(_ r: TaskRecord, _ c: CallContext, app: String? = nil) -> TaskInfo {
        var info = TaskInfo(r, app: app ?? agent.app(ofSession: r.session))
        if c.caller != .host, let file = info.uploadFile, agent.state.contains(file) { info.uploadFile = nil }
        return info
    }
    func infos(_ records: [TaskRecord], _ c: CallContext) -> [TaskInfo] {
        // Each session's app once a page, not once a row (the look-up reads the core's sessions
        // through the agent: a copy of the core's references each time).
        var apps: [String: String] = [:]
        return records.map { r in
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
        let opened = try run(OpenSession(m.identifier, options, peer: c.sender), c)
        return OpenedSession(
            identifier: opened.identifier, created: opened.created, latestSeq: opened.latestSeq, inbox: opened.inbox)
    }

    func status(_ c: CallContext) throws -> AgentStatus {
        let figures = try run(GetStatus(), c)
        var tasks: [TaskState: Int] = [:]
        for (k, v) in figures.counts { if let s = TaskState(rawValue: k) { tasks[s] = v } }
        // A sandboxed app learns nothing of the host's file system.
        let store = c.caller == .host ? agent.storePath : ""
        return AgentStatus(
            version: FerryRelease.version, store: store, pid: Int64(getpid()), tasks: tasks, running: figures.running,
            badge: figures.badge, damagedStore: c.caller == .host ? agent.damagedStore : nil,
            downloadFolder: c.caller == .host ? agent.defaultDownloadFolder : nil)
    }
}
