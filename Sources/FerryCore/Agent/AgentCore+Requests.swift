/// The answers to API requests. Form was checked by the bus layer; meaning is checked here.
/// Each request goes to the machine that owns what it asks about.
extension AgentCore {
    public static let maxBatch = 100_000

    typealias Answer = (reply: AgentReply, effects: [AgentEffect])

    mutating func request(_ r: AgentRequest, _ ctx: TaskContext) throws -> Answer {
        let ledger = ctx.ledger
        func all(_ session: String) -> [String]? { session.isEmpty ? nil : [session] }
        switch r {
        case .openSession(let id, let options, let peer):
            let (reply, effects) = try sessions.open(id, options, peer: peer, app: nil, settings: settings, ledger)
            return (reply, armed(consume effects))
        case .sandboxed(let app, let inner):
            return try sandboxed(app, inner, ctx)
        case .createTasks(let session, let drafts):
            return try create(session: session, drafts, ctx)
        case .createFromResumeData(let session, let data, let draft, let destinationGiven):
            return try createFromResumeData(session: session, data, draft, destinationGiven: destinationGiven, ctx)
        case .listTasks(let session, let after, let limit):
            let page = try ledger.tasks(sessions: all(session), afterID: after, limit: AgentRequest.pageSize(limit))
            return (.tasks(page.map(tasks.shown)), [])
        case .listSection(let session, let active, let offset, let limit):
            let page = try ledger.taskSection(
                sessions: all(session), active: active, offset: offset, limit: AgentRequest.pageSize(limit))
            return (.tasks(page.map(tasks.shown)), [])
        case .getTask(let id):
            return (.task(try tasks.shownTask(id, ledger)), [])
        case .pause(let id):
            try tasks.notSaving(id)
            return (.none, absorb(try tasks.step(id, ctx) { m, now in try m.pause(now: now) }, ctx))
        case .resume(let id):
            var steps = try tasks.step(id, ctx) { m, now in try m.resume(now: now) }
            steps.effects.append(.wake(.schedule, at: nil))
            return (.none, absorb(steps, ctx))
        case .cancel(let id):
            try tasks.notSaving(id)
            return (
                .none, absorb(try tasks.step(id, ctx) { m, now in try m.cancel(keepPartial: false, now: now) }, ctx)
            )
        case .cancelProducingResumeData(let id):
            try tasks.notSaving(id)
            let before = try tasks.shownTask(id, ledger)  // a cancel keeps what the resume data holds
            let steps = try tasks.step(id, ctx) { m, now in try m.cancel(keepPartial: true, now: now) }
            return (.resumeData(Self.resumeBlob(before, staged: ledger.stagedBytes(id))), absorb(steps, ctx))
        case .answerChallenge(let id, let reply):
            return (.none, try answerChallenge(id, reply, ctx))
        case .finishedHandlingEvents(let session):
            return (.none, armed(try sessions.finishedHandlingEvents(session, now: ctx.now, ledger)))
        case .invalidateSession(let session, let cancelTasks):
            return (.none, try invalidateSession(session, cancelTasks: cancelTasks, ctx))
        case .getSession(let session):
            return (.sessionInfo(try sessions.info(session, now: ctx.now, ledger)), [])
        case .fetchEvents(let session, let after, let limit):
            return (try sessions.fetchEvents(session, after: after, limit: limit, ledger), [])
        case .acknowledgeEvents(let session, let seq):
            let confined = !sessions.config(session).app.isEmpty
            return (.none, armed(try sessions.acknowledge(session, upTo: seq, confined: confined)))
        case .resetBadge:
            return (.none, armed(user.resetBadge(now: ctx.now)))
        case .removeTasks(let ids):
            return (.none, absorb(try tasks.remove(ids, ctx), ctx))
        case .clearFinished(let session):
            let ids = try ledger.endedTaskIDs(session: session.isEmpty ? nil : session, updatedBefore: .max)
            return (.count(ids.count), absorb(try tasks.remove(ids, ctx), ctx))
        case .pauseAll(let session):
            let ids = try ledger.taskIDs(
                session: session.isEmpty ? nil : session, states: [.queued, .running, .waiting])
            let (steps, n) = tasks.stepEach(ids.filter { !tasks.finalizing.contains($0) }, ctx, counting: .paused) {
                m, now in try m.pause(now: now)
            }
            return (.count(n), absorb(steps, ctx))
        case .resumeAll(let session):
            let ids = try ledger.taskIDs(session: session.isEmpty ? nil : session, states: [.paused])
            var (steps, n) = tasks.stepEach(ids, ctx, counting: .queued) { m, now in try m.resume(now: now) }
            steps.effects.append(.wake(.schedule, at: nil))
            return (.count(n), absorb(steps, ctx))
        case .status:
            let counts = try ledger.countsByState(sessions: nil)
            return (.status(counts: counts, running: tasks.attached.count, badge: user.badge), [])
        }
    }

    public static func validateSessionIdentifier(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 255,
            id.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 })
        else {
            throw FerryError(.invalidArgument, "session identifier must be 1-255 printable characters without spaces")
        }
    }

    // MARK: - New tasks

    private mutating func create(session: String, _ drafts: [TaskRecord], _ ctx: TaskContext) throws -> Answer {
        try sessions.usable(session, ctx.ledger)
        guard !drafts.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
        guard drafts.count <= Self.maxBatch else {
            throw FerryError(.invalidArgument, "at most \(Self.maxBatch) tasks per call")
        }
        var records = tasks.made(drafts, session: session, ctx)
        var effects: [AgentEffect] = []
        effects.reserveCapacity(records.count + 3)
        for i in records.indices { effects += credentials.take(fromURLOf: &records[i]) }
        effects.append(.store(.insert(records)))
        let owner = ctx.app(session)
        for r in records { effects.append(.taskChanged(r.id, r.state, app: owner)) }
        // Paused tasks wait for ResumeTask (which schedules): nothing to start now.
        if records.contains(where: { $0.state == .queued }) { effects.append(.wake(.schedule, at: nil)) }
        // Tasks with a start time wait for it like a retry: one wake for the earliest of all.
        if let at = records.lazy.filter({ $0.state == .waiting }).compactMap(\.retryAt).min() {
            effects.append(.wake(.retry, at: at))
        }
        return (.taskIDs(records.map(\.id)), armed(consume effects))
    }

    private mutating func createFromResumeData(
        session: String, _ data: ResumeData, _ draft: TaskRecord, destinationGiven: Bool, _ ctx: TaskContext
    ) throws -> Answer {
        try sessions.usable(session, ctx.ledger)
        var r = draft
        r.etag = data.etag
        r.lastModified = data.lastModified
        r.expected = data.expected
        r.suggestedName = data.suggestedName
        let old = try ctx.ledger.task(data.task)
        if let old, old.url == data.url, old.state == .canceled || old.state == .failed {
            r.received = data.received
            if old.directory != nil || old.output != nil, !destinationGiven {
                r.directory = old.directory; r.output = old.output
            }
        }
        var (reply, effects) = try create(session: session, [r], ctx)
        // Adopt the old task's staging bytes; the machine validates them with If-Range.
        if r.received > 0, case .taskIDs(let ids) = reply, let id = ids.first {
            effects.append(.adoptStagedBytes(from: data.task, to: id))
            world.mayHaveStaged?.insert(id)
        }
        return (reply, effects)
    }

    /// The resume data of a task's bytes in staging (what is on disk, not what was counted).
    static func resumeBlob(_ r: TaskRecord, staged: Int64) -> ResumeData {
        ResumeData(
            url: r.url, task: r.id, received: staged, expected: r.expected, etag: r.etag,
            lastModified: r.lastModified, suggestedName: r.suggestedName)
    }

    // MARK: - Across machines

    /// An app's answer to a challenge: CredentialBook holds it, the task's machine takes it.
    private mutating func answerChallenge(
        _ id: Int64, _ reply: ChallengeReply, _ ctx: TaskContext
    ) throws
        -> [AgentEffect]
    {
        let task = tasks.machines[id]?.record ?? (try? ctx.ledger.task(id))
        let answer = credentials.answer(id, reply, url: task?.url ?? "")
        var steps: TaskSteps
        do {
            steps = try tasks.step(id, ctx) { m, now in try m.answerChallenge(answer, now: now) }
        } catch {
            _ = credentials.answerTaken(id, reply, answer, taken: false, session: nil)
            throw error
        }
        steps.effects += credentials.answerTaken(id, reply, answer, taken: true, session: task?.session)
        steps.effects.append(.wake(.schedule, at: nil))
        return absorb(steps, ctx)
    }

    /// InvalidateSession: its tasks canceled if asked; its last event once none is unfinished.
    private mutating func invalidateSession(
        _ session: String, cancelTasks: Bool, _ ctx: TaskContext
    ) throws
        -> [AgentEffect]
    {
        guard let begun = try sessions.beginInvalidation(session, ctx.ledger) else { return [] }
        credentials.forSession[session] = nil  // an app's "for-session" answers end here
        var effects = armed(consume begun)
        var unfinished = try ctx.ledger.unfinishedTaskIDs(session: session)
        if cancelTasks {
            let ctx = context(ctx.now, ctx.ledger)  // the session invalidating
            let steps = tasks.stepEach(unfinished, ctx) { m, now in try m.cancel(keepPartial: false, now: now) }.steps
            effects += absorb(steps, ctx)
            unfinished = []
        }
        // Each effect goes through `armed` once: a wake armed twice is left out the second time.
        return effects + armed(sessions.invalidated(session, unfinished: unfinished, settings: settings))
    }
}
