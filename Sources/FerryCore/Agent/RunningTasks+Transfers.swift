/// What the shell's transfers and saves report, as tasks' steps.
extension RunningTasks {
    /// A response's head came: the transfer waits, paused before its first body byte, for the
    /// decision (`continueBody`), or went on where its plan's `BodyGoAhead` allowed.
    mutating func responseBegan(_ id: Int64, _ head: ResponseHead, _ ctx: TaskContext) -> TaskSteps {
        guard attached.contains(id), machines[id] != nil else { return TaskSteps() }
        var decision = TaskMachine.BodyDecision.append
        var session = ""
        var held: Int64 = 0
        var steps =
            (try? step(id, ctx) { m, _ in
                session = m.record.session
                held = m.record.received
                let (body, actions) = m.responseBegan(
                    status: head.status, contentRangeStart: head.contentRangeStart,
                    totalLength: head.totalLength, etag: head.etag, lastModified: head.lastModified,
                    suggestedName: FileNaming.responseName(
                        contentDisposition: head.contentDisposition, finalURL: head.finalURL, taskURL: m.record.url,
                        contentType: head.contentType),
                    contentEncoding: head.contentEncoding, contentType: head.contentType)
                decision = body
                // The end came with the head, and its body is small: the save writes the row (a
                // crash before it fetches such a body again rather than resume it), so the head
                // is no checkpoint of its own: one row write fewer for a small file.
                guard m.record.state == .running, let bytes = head.endedWith, bytes <= Self.refetchedWhole else {
                    return actions
                }
                return actions.filter { $0 != .persist }
            }) ?? TaskSteps()
        // The state disk's reserve: the bytes announced and not on disk yet must leave it free.
        let kept = decision == .append ? head.contentRangeStart ?? 0 : 0
        let refused = if case .reject = decision { true } else { false }
        let more = max(0, (head.totalLength ?? kept) - kept)
        if !refused, let space = head.stagingSpace,
            let refusal = ctx.settings.stateReserve.refusal(writing: more, space)
                ?? appRefusal(id, session, needing: kept + more, space, ctx)
        {
            // No decision: the transfer stays paused before its first byte until it is stopped.
            steps.effects.append(.stopTransfer(id))
            steps += transferEnded(
                id, received: kept, .noSpace(refusal, bytesThisAttempt: 0), credentials: .notTaken, ctx)
            return steps
        }
        if head.wentAhead {
            // The body went on under the plan's `BodyGoAhead`, which allows only what this
            // decides to let on (an empty file: append and restart are the same).
            guard case .reject(let why) = decision else { return steps }
            var outcome = TransferOutcome(curlCode: 23, httpStatus: head.status)  // as a refused write ends
            outcome.rejection = why
            steps.effects.append(.stopTransfer(id))
            steps += transferEnded(id, received: 0, outcome, credentials: .notTaken, ctx)
            return steps
        }
        if decision == .restartFromZero, held > 0 {
            steps.effects.append(
                .log(
                    .info,
                    "task \(id): the server sent the whole file instead of the rest (it is not the file the \(held) "
                        + "bytes came from): starting over"))
        }
        steps.effects.append(.continueBody(id, decision))
        return steps
    }

    /// The most bytes a download whose head and end came together may have to fetch again after
    /// a crash before its save: its head's checkpoint (validators, length) is not written.
    static let refetchedWhole: Int64 = 1 << 20

    /// Why a sandboxed app's download that will hold `bytes` in staging waits: its app's other
    /// downloads (those running counted at the length they announced) would pass its share.
    func appRefusal(
        _ id: Int64, _ session: String, needing bytes: Int64, _ space: DiskSpace, _ ctx: TaskContext
    ) -> String? {
        let app = ctx.app(session)
        guard !app.isEmpty else { return nil }
        let sessions = ctx.configs.filter { $0.value.app == app }.map(\.key)
        var holding = (try? ctx.ledger.heldInStaging(sessions: sessions, excluding: runningIDs)) ?? 0
        for other in attached where other != id {
            guard let r = machines[other]?.record, r.kind == .download, ctx.app(r.session) == app else { continue }
            holding += max(r.received, r.expected ?? 0)
        }
        return ctx.settings.stateReserve.appRefusal(app: app, holding: holding, more: bytes, space)
    }

    /// A download of no announced length wrote a few more MiB: it stops and waits for space
    /// when the state disk has no more than its reserve free.
    mutating func stagingSpace(_ id: Int64, received: Int64, _ space: DiskSpace, _ ctx: TaskContext) -> TaskSteps {
        guard attached.contains(id),
            let refusal = ctx.settings.stateReserve.refusal(writing: 0, space)
                ?? appRefusal(id, machines[id]?.record.session ?? "", needing: received, space, ctx)
        else {
            return TaskSteps()
        }
        let offset = stallWatches[id]?.offset ?? received
        var steps = TaskSteps()
        steps.effects.append(.stopTransfer(id))
        steps += transferEnded(
            id, received: received, .noSpace(refusal, bytesThisAttempt: max(0, received - offset)),
            credentials: .notTaken, ctx)
        return steps
    }

    mutating func progressed(_ id: Int64, _ received: Int64, _ ctx: TaskContext) -> TaskSteps {
        guard attached.contains(id), let m = machines[id], m.record.received != received else { return TaskSteps() }
        stallWatches[id]?.lastMoved = ctx.now
        var steps = (try? step(id, ctx) { m, now in m.progressed(received: received, now: now) }) ?? TaskSteps()
        live.progressMoved.insert(id)
        steps.effects.append(Self.launcherWake(ctx.now))
        return steps
    }

    mutating func resourceAnnounced(_ id: Int64, _ location: String, _ ctx: TaskContext) -> TaskSteps {
        guard attached.contains(id), machines[id] != nil else { return TaskSteps() }
        return (try? step(id, ctx) { m, _ in m.resourceAnnounced(location) }) ?? TaskSteps()
    }

    /// The attached transfer's record, when it has one (what an ended attempt is judged by).
    func attachedRecord(_ id: Int64) -> TaskRecord? { attached.contains(id) ? machines[id]?.record : nil }

    /// An attempt ended. `credentials`: what CredentialBook made of it (a 401 it answers, or
    /// asks the keyring about, waits for that instead of failing).
    mutating func transferEnded(
        _ id: Int64, received: Int64, _ outcome: TransferOutcome, credentials: CredentialBook.ChallengeStep,
        _ ctx: TaskContext
    ) -> TaskSteps {
        guard let r = detach(id) else { return TaskSteps() }
        journal.detached.insert(id)
        if r.received != received { live.progressMoved.insert(id) }
        var steps = TaskSteps()
        switch credentials {
        case .notTaken:
            let config = ctx.config(r.session), settings = ctx.settings
            let reachable = ctx.network.available || DownloadURL.isLoopback(host: r.host)
            let deadline = Self.deadline(r, config), random = Self.random(id, ctx.now)
            steps =
                (try? step(id, ctx, logsFailure: true) { m, now in
                    let moved = Self.bytesAtEnd(&m, received, now)
                    return moved
                        + m.transferEnded(
                            outcome, backoff: settings.backoff, resourceDeadline: deadline, now: now, random: random,
                            networkAvailable: reachable, canChallenge: config.keepEvents,
                            userAnswers: config.app.isEmpty, spaceRecheck: settings.spaceRecheck)
                }) ?? TaskSteps()
        case .useKnown:
            steps =
                (try? step(id, ctx) { m, now in
                    let moved = Self.bytesAtEnd(&m, received, now)
                    _ = m.awaitRememberedCredential(now: now)
                    return moved + m.rememberedCredentialFound(now: now)
                }) ?? TaskSteps()
        case .askKeyring(let keys):
            steps =
                (try? step(id, ctx) { m, now in
                    let moved = Self.bytesAtEnd(&m, received, now)
                    return moved + m.awaitRememberedCredential(now: now)
                }) ?? TaskSteps()
            steps.effects.append(.findCredential(task: id, keys))
        }
        steps.effects.append(Self.launcherWake(ctx.now))
        steps.effects.append(.wake(.schedule, at: nil))
        if outcome.curlCode != 0 || outcome.stalledSeconds != nil {
            // The cause first, then what it made of the task (a failure's warning).
            steps.effects.insert(
                .log(
                    .info,
                    "task \(id): attempt ended: curl \(outcome.curlCode) HTTP \(outcome.httpStatus) "
                        + "\(outcome.rejection ?? outcome.curlMessage)"), at: 0)
        }
        steps.transfersChanged = true
        return steps
    }

    /// The bytes an attempt's end reports, taken as a progress report (the transfer thread
    /// sends the end instead of its last one): the app hears them as it would have.
    static func bytesAtEnd(_ m: inout TaskMachine, _ received: Int64, _ now: Int64) -> [TaskMachine.Action] {
        m.record.received == received ? [] : m.progressed(received: received, now: now)
    }

    /// ENOSPC waits for space; anything else fails clearly.
    mutating func transferCouldNotStart(_ id: Int64, _ outcome: TransferOutcome, _ ctx: TaskContext) -> TaskSteps {
        guard let r = detach(id) else { return TaskSteps() }
        journal.detached.insert(id)
        let settings = ctx.settings
        let deadline = Self.deadline(r, ctx.config(r.session)), random = Self.random(id, ctx.now)
        var steps =
            (try? step(id, ctx, logsFailure: true) { m, now in
                m.transferEnded(
                    outcome, backoff: settings.backoff, resourceDeadline: deadline, now: now, random: random,
                    spaceRecheck: settings.spaceRecheck)
            }) ?? TaskSteps()
        steps.effects.append(.wake(.schedule, at: nil))
        steps.transfersChanged = true
        return steps
    }

    /// Backoff jitter without a random source: the task id and the time spread retries well enough.
    static func random(_ id: Int64, _ now: Int64) -> Double {
        var x = UInt64(bitPattern: now) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: id)
        x ^= x >> 31; x &*= 0xBF58_476D_1CE4_E5B9; x ^= x >> 29
        return Double(x % 1_000_000) / 1_000_000
    }

    static func deadline(_ r: TaskRecord, _ config: SessionConfig) -> Int64? {
        r.created + Int64(config.resourceTimeout) * 1_000_000
    }

    /// The transfers that moved no byte for their limit are stopped, each attempt ended as
    /// stalled; the wake for the next moment one may stall.
    mutating func checkStalls(_ ctx: TaskContext) -> TaskSteps {
        let (stalled, next) = stalls(now: ctx.now, defaultLimit: Int64(ctx.settings.stallSeconds) * 1_000_000)
        var steps = TaskSteps()
        for (id, watch) in stalled {
            // Detached (the shell keeps its bytes on disk) and ended as stalled.
            guard let r = machines[id]?.record else { continue }
            steps.effects.append(.stopTransfer(id))
            let outcome = TransferOutcome.stalled(
                seconds: watch.limit / 1_000_000, bytesThisAttempt: max(0, r.received - watch.offset))
            steps += transferEnded(id, received: r.received, outcome, credentials: .notTaken, ctx)
        }
        if let next { steps.effects.append(.wake(.stall, at: next)) }
        return steps
    }
}
