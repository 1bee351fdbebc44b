/// The answers to API requests. Form was checked by the bus layer; meaning is checked here.
extension AgentCore {
    public static let maxBatch = 100_000

    mutating func request(_ r: AgentRequest, _ ledger: AgentLedger) throws -> AgentReply {
        switch r {
        case .openSession(let id, let options, let peer):
            return try openSession(id, options, peer: peer, app: nil, ledger)
        case .sandboxed(let app, let inner):
            return try sandboxedRequest(app, inner, ledger)
        case .createTasks(let session, let drafts):
            return .taskIDs(try create(session: session, drafts, ledger))
        case .createFromResumeData(let session, let data, let draft, let destinationGiven):
            return .taskIDs([
                try createFromResumeData(session: session, data, draft, destinationGiven: destinationGiven, ledger)
            ])
        case .listTasks(let session, let after, let limit):
            let n = AgentRequest.pageSize(limit)
            return .tasks(
                try ledger.tasks(sessions: session.isEmpty ? nil : [session], afterID: after, limit: n).map(shown))
        case .listSection(let session, let active, let offset, let limit):
            let n = AgentRequest.pageSize(limit)
            return .tasks(
                try ledger.taskSection(
                    sessions: session.isEmpty ? nil : [session], active: active,
                    offset: offset, limit: n
                ).map(shown))
        case .getTask(let id):
            return .task(try shownTask(id, ledger))
        case .pause(let id):
            try notSaving(id)
            try withMachine(id, ledger) { m, now in try m.pause(now: now) }
        case .resume(let id):
            try withMachine(id, ledger) { m, now in try m.resume(now: now) }
            wake(.schedule)
        case .cancel(let id):
            try notSaving(id)
            try withMachine(id, ledger) { m, now in try m.cancel(keepPartial: false, now: now) }
        case .cancelProducingResumeData(let id):
            try notSaving(id)
            let r = try withMachine(id, ledger) { m, now in try m.cancel(keepPartial: true, now: now) }
            return .resumeData(Self.resumeBlob(r, staged: ledger.stagedBytes(id)))
        case .answerChallenge(let id, let reply):
            try answerChallenge(id, reply, ledger)
        case .finishedHandlingEvents(let session):
            emit(try sessions.finishedHandlingEvents(session, now: now, ledger))
        case .invalidateSession(let session, let cancelTasks):
            try invalidateSession(session, cancelTasks: cancelTasks, ledger)
        case .getSession(let session):
            return .sessionInfo(try sessions.info(session, now: now, ledger))
        case .fetchEvents(let session, let after, let limit):
            return try sessions.fetchEvents(session, after: after, limit: limit, ledger)
        case .acknowledgeEvents(let session, let seq):
            try acknowledgeEvents(session, upTo: seq)
        case .resetBadge:
            emit(user.resetBadge(now: now))
        case .removeTasks(let ids):
            try removeTasks(ids, ledger)
        case .clearFinished(let session):
            let ids = try ledger.endedTaskIDs(session: session.isEmpty ? nil : session, updatedBefore: .max)
            try removeTasks(ids, ledger)
            return .count(ids.count)
        case .pauseAll(let session):
            var n = 0
            for id in try ledger.taskIDs(
                session: session.isEmpty ? nil : session, states: [.queued, .running, .waiting])
            where !tasks.finalizing.contains(id) {
                if (try? withMachine(id, ledger) { m, now in try m.pause(now: now) })?.state == .paused { n += 1 }
            }
            return .count(n)
        case .resumeAll(let session):
            var n = 0
            for id in try ledger.taskIDs(session: session.isEmpty ? nil : session, states: [.paused]) {
                if (try? withMachine(id, ledger) { m, now in try m.resume(now: now) })?.state == .queued { n += 1 }
            }
            wake(.schedule)
            return .count(n)
        case .status:
            return .status(
                counts: try ledger.countsByState(sessions: nil), running: tasks.attached.count, badge: user.badge)
        }
        return .none
    }

    // MARK: - Sessions

    mutating func openSession(
        _ identifier: String, _ options: SessionOptions, peer: String, app: SandboxedApp?,
        _ ledger: AgentLedger
    ) throws -> AgentReply {
        // an alias's name
        try Self.validateSessionIdentifier(app.map { SessionKey.name(of: identifier, app: $0.id) } ?? identifier)
        let existing = try ledger.session(identifier)
        var config = options.applied(to: existing ?? SessionConfig())
        config.invalid = false  // a new life for an invalidated identifier
        if existing == nil {  // the owner is whoever created it, for good
            config.app = app?.id ?? ""
            config.appKind = app?.kind.rawValue ?? ""
        } else if app == nil, !config.app.isEmpty, identifier != config.app, !identifier.hasPrefix(config.app + ".") {
            // Opened by an app outside its own namespace before apps were held to it (squatted):
            // the host takes it back, so its tasks never go to that app's inbox or relaunch.
            log(
                .warning,
                "session \(identifier) was opened by the sandboxed app \(config.app) outside its namespace: it is the "
                    + "host's again"
            )
            config.app = ""
            config.appKind = ""
            config.appHome = ""
        }
        if let app { config.appHome = app.home }
        out.append(.store(.saveSession(identifier, config)))
        sessions.configs[identifier] = config
        if sessions.queues[identifier] == nil { sessions.queues[identifier] = EventQueue() }
        if !peer.isEmpty { sessions.clients[identifier, default: []].insert(peer) }
        return .session(
            identifier: identifier, created: existing == nil, latestSeq: sessions.queues[identifier]?.lastSeq ?? 0,
            inbox: SessionRules(session: identifier, config: config, settings: settings).inbox)
    }

    public static func validateSessionIdentifier(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 255,
            id.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 })
        else {
            throw FerryError(.invalidArgument, "session identifier must be 1-255 printable characters without spaces")
        }
    }

    /// The session tasks may be added to.
    private func usableSession(_ session: String, _ ledger: AgentLedger) throws {
        // `sessions` mirrors the store's sessions: no read (and no JSON) per request.
        guard let config = try sessions.configs[session] ?? ledger.session(session) else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        guard !config.invalidating, !config.invalid else {
            throw FerryError(.invalidState, "session '\(session)' was invalidated: open it again for new tasks")
        }
    }

    // MARK: - New tasks

    private mutating func create(session: String, _ drafts: [TaskRecord], _ ledger: AgentLedger) throws -> [Int64] {
        try usableSession(session, ledger)
        guard !drafts.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
        guard drafts.count <= Self.maxBatch else {
            throw FerryError(.invalidArgument, "at most \(Self.maxBatch) tasks per call")
        }
        var records = drafts
        for i in records.indices {
            tasks.lastTaskID += 1
            records[i].id = tasks.lastTaskID
            records[i].session = session
            records[i].created = now
            records[i].updated = now
            if let timeout = records[i].deadline { records[i].deadline = now + timeout }  // seconds from now, as asked
            takeCredential(fromURLOf: &records[i])
            if records[i].maxRate == nil, config(session).maxRate > 0 { records[i].maxRate = config(session).maxRate }
        }
        out.append(.store(.insert(records)))
        let owner = app(ofSession: session)
        for r in records { out.append(.taskChanged(r.id, r.state, app: owner)) }
        // Paused tasks wait for ResumeTask (which schedules): nothing to start now.
        if records.contains(where: { $0.state == .queued }) { wake(.schedule) }
        // Tasks with a start time wait for it like a retry: one wake for the earliest of all.
        if let at = records.lazy.filter({ $0.state == .waiting }).compactMap(\.retryAt).min() {
            wake(.retry, noLaterThan: at, due: \.retryDueAt)
        }
        return records.map(\.id)
    }

    private mutating func createFromResumeData(
        session: String, _ data: ResumeData, _ draft: TaskRecord,
        destinationGiven: Bool, _ ledger: AgentLedger
    ) throws -> Int64 {
        try usableSession(session, ledger)
        var r = draft
        r.etag = data.etag
        r.lastModified = data.lastModified
        r.expected = data.expected
        r.suggestedName = data.suggestedName
        let old = try ledger.task(data.task)
        if let old, old.url == data.url, old.state == .canceled || old.state == .failed {
            r.received = data.received
            if old.directory != nil || old.output != nil, !destinationGiven {
                r.directory = old.directory; r.output = old.output
            }
        }
        let id = try create(session: session, [r], ledger)[0]
        // Adopt the old task's staging bytes; the machine validates them with If-Range.
        if r.received > 0 {
            out.append(.adoptStagedBytes(from: data.task, to: id))
            world.mayHaveStaged?.insert(id)
        }
        return id
    }

    // MARK: - Changing tasks

    /// A file being verified and moved into place is past stopping: its bytes are all there.
    private func notSaving(_ id: Int64) throws {
        guard !tasks.finalizing.contains(id) else {
            throw FerryError(
                .invalidState,
                "task \(id) has every byte and is being saved to its destination; it can no longer be paused or "
                    + "canceled"
            )
        }
    }

    /// The resume data of a task's bytes in staging (what is on disk, not what was counted).
    static func resumeBlob(_ r: TaskRecord, staged: Int64) -> ResumeData {
        ResumeData(
            url: r.url, task: r.id, received: staged, expected: r.expected, etag: r.etag,
            lastModified: r.lastModified, suggestedName: r.suggestedName)
    }

    private mutating func answerChallenge(_ id: Int64, _ reply: ChallengeReply, _ ledger: AgentLedger) throws {
        let choice: TaskMachine.ChallengeAnswer
        switch reply {
        case .credential(let c, _) where tasks.proxyAsked.contains(id):
            tasks.proxyCredentials[id] = c  // the proxy's: never sent to a server
            choice = .useCredential
        case .credential(let c, _):
            // For the origin that asked (unknown after a restart: the task's own).
            let url = tasks.machines[id]?.record.url ?? (try? ledger.task(id))?.url ?? ""
            tasks.credentials[id] = BoundCredential(c, origin: credentials.challenged[id]?.origin ?? Origin(url))
            choice = .useCredential
        case .reject: choice = .reject
        case .cancel: choice = .cancel
        }
        do {
            try withMachine(id, ledger) { m, now in try m.answerChallenge(choice, now: now) }
        } catch {
            if choice == .useCredential { tasks.credentials[id] = nil; tasks.proxyCredentials[id] = nil }
            throw error
        }
        if choice != .useCredential { tasks.credentials[id] = nil }
        if case .credential(let c, let persistence) = reply, !tasks.proxyAsked.contains(id) {
            keepAnswer(c, persistence, task: id, ledger)
        }
        wake(.schedule)
    }
}
