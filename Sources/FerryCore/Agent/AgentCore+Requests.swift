/// The answers to API requests (each a `CoreRequest`, in Requests/). Form was checked by the bus
/// layer; meaning is checked here, by the machine that owns what each asks about.
extension AgentCore {
    public static let maxBatch = 100_000

    /// A request, from a host program (`app` nil) or a sandboxed app: its typed reply and the
    /// effects to carry out. A refused request throws and changes nothing.
    public mutating func answer<R: CoreRequest>(
        _ r: R, from app: SandboxedApp? = nil, now: Int64, ledger: AgentLedger
    ) throws -> (R.Reply, [AgentEffect]) {
        beginTurnIfNeeded()
        let ctx = context(now, ledger)
        guard let app else { return try r.run(&self, ctx, .host) }
        return try sandboxed(app, r, ctx)
    }

    public static func validateSessionIdentifier(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 255,
            id.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 })
        else {
            throw FerryError(.invalidArgument, "session identifier must be 1-255 printable characters without spaces")
        }
    }

    // MARK: - New tasks

    mutating func create(
        session: String, _ drafts: [TaskRecord], _ ctx: TaskContext
    ) throws -> (
        [Int64], [AgentEffect]
    ) {
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
        return (records.map(\.id), armed(consume effects))
    }

    mutating func createFromResumeData(
        session: String, _ data: ResumeData, _ draft: TaskRecord, destinationGiven: Bool, _ ctx: TaskContext
    ) throws -> (Int64, [AgentEffect]) {
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
        var (ids, effects) = try create(session: session, [r], ctx)
        // Adopt the old task's staging bytes; the machine validates them with If-Range.
        if r.received > 0 {
            effects.append(.adoptStagedBytes(from: data.task, to: ids[0]))
            world.mayHaveStaged?.insert(ids[0])
        }
        return (ids[0], effects)
    }

    /// The resume data of a task's bytes in staging (what is on disk, not what was counted).
    static func resumeBlob(_ r: TaskRecord, staged: Int64) -> ResumeData {
        ResumeData(
            url: r.url, task: r.id, received: staged, expected: r.expected, etag: r.etag,
            lastModified: r.lastModified, suggestedName: r.suggestedName)
    }

    // MARK: - Across machines

    /// An app's answer to a challenge: CredentialBook holds it, the task's machine takes it.
    mutating func answerChallenge(
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
    mutating func invalidateSession(
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

    // MARK: - A new URL

    /// SetURL (see `TaskMachine.newURL`): whether the app's header fields were dropped.
    mutating func setURL(_ id: Int64, _ typed: SetTaskURL, _ ctx: TaskContext) throws -> (Bool, [AgentEffect]) {
        guard !tasks.isSaving(id) else {
            throw FerryError(.invalidState, "task \(id) has every byte and is being saved; it needs no new URL")
        }
        let (url, credential) = DownloadURL.splitCredential(typed.url)
        var dropped = false
        var steps = try tasks.step(id, ctx) { m, now in
            let (d, actions) = try m.newURL(url, host: typed.host, now: now)
            dropped = d
            return actions
        }
        var effects: [AgentEffect] = []
        if credential != nil, var r = try? tasks.shownTask(id, ctx.ledger) {
            r.url = typed.url
            effects += credentials.take(fromURLOf: &r)  // bound to the new URL's origin
        }
        effects.append(
            .log(
                .info,
                "task \(id): new URL \(DownloadURL.printable(url))"
                    + (dropped ? " (another origin: the task's header fields were dropped)" : "")))
        steps.effects += effects
        steps.effects.append(.wake(.schedule, at: nil))
        return (dropped, absorb(steps, ctx))
    }
}
