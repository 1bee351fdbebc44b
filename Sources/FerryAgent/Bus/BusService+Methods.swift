import FerryBus
import FerryCore
import Glibc

/// One line per method of dev.ferry.Agent1: its typed arguments become the core's request,
/// the core's reply becomes the method's typed reply.
extension BusService {
    func makeMethodTable() -> MethodTable {
        var t = MethodTable()
        t.on(Agent1.OpenSession.self) { [unowned self] m, c in try openSession(m, c) }
        t.on(Agent1.GetSession.self) { [unowned self] m, c in try run(.getSession(m.session), c).expect("a session") { $0.session } }
        t.on(Agent1.InvalidateSession.self) { [unowned self] m, c in
            try run(.invalidateSession(m.session, cancelTasks: m.cancelTasks), c).expect("nothing") { $0.isNone }
        }
        t.on(Agent1.FinishedHandlingEvents.self) { [unowned self] m, c in
            try run(.finishedHandlingEvents(m.session), c).expect("nothing") { $0.isNone }
        }
        t.on(Agent1.FetchEvents.self) { [unowned self] m, c in
            guard case .events(let events, let blobs) = try run(.fetchEvents(session: m.session, after: m.after, limit: m.limit), c) else {
                throw FerryError(.failed, "internal error: FetchEvents got no events")
            }
            return events.map { FetchedEvent($0, resumeData: blobs[$0.task].map(agent.resumeSeal.seal)) }
        }
        t.on(Agent1.AcknowledgeEvents.self) { [unowned self] m, c in
            try run(.acknowledgeEvents(session: m.session, upTo: m.upTo), c).expect("nothing") { $0.isNone }
        }
        t.on(Agent1.ResetBadge.self) { [unowned self] _, c in try run(.resetBadge, c).expect("nothing") { $0.isNone } }
        t.on(Agent1.GetStatus.self) { [unowned self] _, c in try status(c) }

        t.on(Agent1.CreateDownload.self) { [unowned self] m, c in
            try run(.createTasks(session: m.session, [try RequestDecoder.download(url: m.url, m.options)]), c).expect("a task") { $0.taskID }
        }
        t.on(Agent1.CreateDownloads.self) { [unowned self] m, c in
            guard !m.requests.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
            return try run(.createTasks(session: m.session, try RequestDecoder.downloads(m.requests)), c).expect("tasks") { $0.taskIDs }
        }
        t.on(Agent1.CreateDownloadFromResumeData.self) { [unowned self] m, c in
            let data = try agent.resumeSeal.check(m.resumeData)
            let draft = try RequestDecoder.download(url: data.url, m.options)
            let request = AgentRequest.createFromResumeData(session: m.session, data, draft,
                                                            destinationGiven: draft.directory != nil || draft.output != nil)
            return try run(request, c).expect("a task") { $0.taskID }
        }
        t.later(Agent1.CreateUpload.self) { [unowned self] m, c, answer in upload(m, c, answer) }
        t.later(Agent1.CreateUploadFromFd.self) { [unowned self] m, c, answer in uploadFromDescriptor(m, c, answer) }

        t.on(Agent1.ListTasks.self) { [unowned self] m, c in try infos(run(.listTasks(session: m.session, after: m.after, limit: m.limit), c), c) }
        t.on(Agent1.ListTaskRows.self) { [unowned self] m, c in
            let p = m.page
            return try infos(run(.listTasks(session: p.session, after: p.after, limit: p.limit), c), c)
        }
        t.on(Agent1.ListTaskRowsSection.self) { [unowned self] m, c in
            try infos(run(.listSection(session: m.session, active: m.section == .active, offset: m.offset, limit: m.limit), c), c)
        }
        t.on(Agent1.GetTask.self) { [unowned self] m, c in try info(run(.getTask(m.task), c).expect("a task") { $0.record }, c) }
        t.on(Agent1.Pause.self) { [unowned self] m, c in try run(.pause(m.task), c).expect("nothing") { $0.isNone } }
        t.on(Agent1.Resume.self) { [unowned self] m, c in try run(.resume(m.task), c).expect("nothing") { $0.isNone } }
        t.on(Agent1.Cancel.self) { [unowned self] m, c in try run(.cancel(m.task), c).expect("nothing") { $0.isNone } }
        t.on(Agent1.CancelProducingResumeData.self) { [unowned self] m, c in
            agent.resumeSeal.seal(try run(.cancelProducingResumeData(m.task), c).expect("resume data") { $0.resumeBlob })
        }
        t.on(Agent1.AnswerChallenge.self) { [unowned self] m, c in
            try run(.answerChallenge(m.task, m.answer), c).expect("nothing") { $0.isNone }
        }
        t.on(Agent1.RemoveTasks.self) { [unowned self] m, c in try run(.removeTasks(m.tasks), c).expect("nothing") { $0.isNone } }
        t.on(Agent1.ClearFinished.self) { [unowned self] m, c in try run(.clearFinished(session: m.session), c).expect("a count") { $0.number } }
        t.on(Agent1.PauseAll.self) { [unowned self] m, c in try run(.pauseAll(session: m.session), c).expect("a count") { $0.number } }
        t.on(Agent1.ResumeAll.self) { [unowned self] m, c in try run(.resumeAll(session: m.session), c).expect("a count") { $0.number } }
        return t
    }

    /// Hands a request to the core as the caller may make it: a sandboxed app's paths are
    /// checked against what it may use (`checkPaths` false: the agent chose them, as the copy of
    /// an uploaded descriptor), and the core sees whose request it is.
    func run(_ request: AgentRequest, _ c: MethodTable.Context, checkPaths: Bool = true) throws -> AgentReply {
        guard case .sandboxed(let app) = c.caller else { return try agent.request(request) }
        return try agent.request(.sandboxed(app, checkPaths ? try SandboxPaths.resolve(request, app) : request))
    }

    /// A task as the caller sees it: a sandboxed app learns no path of the agent's state (the
    /// copy of a file it uploads is the agent's), as GetStatus hides the store's.
    private func info(_ r: TaskRecord, _ c: MethodTable.Context) -> TaskInfo {
        var info = TaskInfo(r, app: agent.app(ofSession: r.session))
        if c.caller != .host, let file = info.uploadFile, agent.state.contains(file) { info.uploadFile = nil }
        return info
    }
    private func infos(_ reply: AgentReply, _ c: MethodTable.Context) throws -> [TaskInfo] {
        try reply.expect("tasks") { $0.records }.map { info($0, c) }
    }

    private func openSession(_ m: Agent1.OpenSession, _ c: MethodTable.Context) throws -> OpenedSession {
        try AgentCore.validateSessionIdentifier(m.identifier)
        let options = try RequestDecoder.sessionOptions(m.options)
        // Finished files wait here for the app (it moves them during didFinishDownloadingTo).
        if case .sandboxed(let app) = c.caller {
            // The app owns the folders on the way: made one by one, none through a link.
            _ = try ConfinedFolder(StateFolder.appInbox(appHome: app.home, session: m.identifier), creatingBelow: app.home)
        } else {
            let inbox = agent.state.inbox(m.identifier)
            guard Paths.mkdirAll(inbox, mode: 0o700) else { throw FerryError(.failed, "cannot create the session's inbox \(inbox)") }
        }
        guard case .session(let id, let created, let latest, let given) = try run(.openSession(m.identifier, options, peer: c.sender), c) else {
            throw FerryError(.failed, "internal error: OpenSession got no session")
        }
        return OpenedSession(identifier: id, created: created, latestSeq: latest, inbox: given)
    }

    private func status(_ c: MethodTable.Context) throws -> AgentStatus {
        guard case .status(let counts, let running, let badge) = try run(.status, c) else {
            throw FerryError(.failed, "internal error: GetStatus got no status")
        }
        var tasks: [TaskState: Int] = [:]
        for (k, v) in counts { if let s = TaskState(rawValue: k) { tasks[s] = v } }
        // A sandboxed app learns nothing of the host's file system.
        let store = c.caller == .host ? agent.storePath : ""
        return AgentStatus(version: FerryRelease.version, store: store, pid: Int64(getpid()), tasks: tasks, running: running, badge: badge)
    }
}
