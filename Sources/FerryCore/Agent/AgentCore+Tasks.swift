/// Tasks: machine events, what their actions mean for the agent, transfers and saves, what the
/// user is told of them.
extension AgentCore {
    /// Runs one machine event for a task (running or stored) and carries out its actions.
    /// `stored`: the task's row as this turn just read it (spares reading it again).
    @discardableResult
    mutating func withMachine(
        _ id: Int64, _ ledger: AgentLedger, stored: TaskRecord? = nil,
        _ body: (inout TaskMachine, _ now: Int64) throws -> [TaskMachine.Action]
    ) throws -> TaskRecord {
        // Taken out of memory, not copied: changed in place by its one owner, then put back.
        rememberMachine(id)
        var m: TaskMachine
        let live: Bool
        if let taken = tasks.machines.removeValue(forKey: id) {
            (m, live) = (taken, true)
        } else if let r = try stored ?? ledger.task(id) {
            (m, live) = (TaskMachine(r), false)
        } else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        let stateBefore = m.record.state
        let actions: [TaskMachine.Action]
        do {
            actions = try body(&m, now)
        } catch {
            if live { tasks.machines[id] = m }  // a machine's step refuses before it changes anything
            throw error
        }
        touch(id, session: m.record.session)
        tasks.machines[id] = consume m
        carryOut(actions, id, stateBefore: stateBefore)
        // carryOut keeps the machine; were it gone, the task's row is what the store has.
        guard let record = try tasks.machines[id]?.record ?? ledger.task(id) else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        if record.state != .running || (!tasks.attached.contains(id) && !tasks.finalizing.contains(id)) {
            tasks.machines[id] = nil
        }
        // Rechecks cycle waiting → queued → running: the warning is forgotten only when the task
        // ends, is paused or waits for something else.
        if record.state.isFinal || record.state == .paused || (record.state == .waiting && record.reason != .space) {
            user.spaceWarned.remove(id)
        }
        if record.state == .completed { turnStart?.completed.insert(id) }
        if record.state.isFinal {
            forgetCredential(ofEnded: record)
            wake(.prune)
        }
        return record
    }

    private mutating func carryOut(_ actions: [TaskMachine.Action], _ id: Int64, stateBefore: TaskState) {
        for action in actions {
            guard let r = tasks.machines[id]?.record else { return }
            switch action {
            case .startTransfer(var plan):
                let rules = rules(r.session), stall = rules.stallSeconds
                plan.cookieJar = rules.cookieJar
                plan.proxyCredential = tasks.proxyCredentials[id]
                world.mayHaveStaged?.insert(id)
                watchForStall(r, seconds: stall, from: plan.offset)
                out.append(
                    .startTransfer(
                        r, plan, stallSeconds: stall, credential: tasks.credentials[id]?.forRequest(to: plan.url)))
                launcherProgressChanged()
            case .stopTransfer:
                // Not journaled as detached: if the turn cannot commit, the stop never happens.
                if tasks.detach(id) != nil {
                    out.append(.stopTransfer(id))
                    launcherProgressChanged()
                    wake(.schedule)
                }
            case .discardPartial:
                out.append(.discardBytes(id))
            case .quarantine:
                out.append(.quarantine(id))
            case .warnNoSpace:
                if config(r.session).popups { out += user.noSpace(id, name: Self.displayName(r)) }
            case .finalize:
                if tasks.finalizing.insert(id).inserted {
                    let rules = rules(r.session)
                    out.append(
                        r.kind == .upload
                            ? .finalize(rules.reply(of: r), defaultDirectory: nil, confined: rules.confined)
                            : .finalize(r, defaultDirectory: rules.defaultDirectory, confined: rules.confined))
                }
            case .scheduleRetry(let at):
                wake(.retry, noLaterThan: at, due: \.retryDueAt)
            case .emit(let event):
                tellUser(event, r)
                if event.isProgress { launcherProgressChanged() }
                append(session: r.session, task: id, event)
            case .persist:
                let sameState = r.state == .running && stateBefore == .running
                out.append(.store(sameState ? .progress(r) : .update(r)))
                if sameState {
                    // Not a new state: a small file is often done before anyone could look.
                    user.rowsChanged.insert(id)
                    launcherProgressChanged()
                } else {
                    user.rowsChanged.remove(id)
                    out.append(.taskChanged(id, r.state, app: app(ofSession: r.session)))
                }
                // The agent's copy of a handed-over descriptor is needed no more (nor ever again).
                if r.state.isFinal, isUploadCopy(r), let copy = r.uploadFile {
                    out.append(.removeFiles([copy], confined: false))
                }
            }
        }
    }

    /// A name for the user: the file's, or the one the URL or the server suggests.
    static func displayName(_ r: TaskRecord) -> String {
        if let output = r.output, let name = output.split(separator: "/").last { return String(name) }
        return FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: DownloadURL.printable(r.url))
    }

    // MARK: - Transfers

    mutating func responseBegan(_ id: Int64, _ head: ResponseHead, _ ledger: AgentLedger) {
        guard tasks.attached.contains(id), tasks.machines[id] != nil else { return }
        var decision = TaskMachine.BodyDecision.append
        _ = try? withMachine(id, ledger) { m, _ in
            let (body, actions) = m.responseBegan(
                status: head.status, contentRangeStart: head.contentRangeStart,
                totalLength: head.totalLength, etag: head.etag, lastModified: head.lastModified,
                suggestedName: head.contentDisposition.flatMap(FileNaming.contentDispositionName),
                contentEncoding: head.contentEncoding, contentType: head.contentType)
            decision = body
            return actions
        }
        // The transfer waits, paused before its first body byte, for this.
        out.append(.continueBody(id, decision))
    }

    mutating func progressed(_ id: Int64, _ received: Int64, _ ledger: AgentLedger) {
        guard tasks.attached.contains(id), let m = tasks.machines[id], m.record.received != received else { return }
        tasks.stallWatches[id]?.lastMoved = now
        _ = try? withMachine(id, ledger) { m, now in m.progressed(received: received, now: now) }
        user.progressMoved.insert(id)
        launcherProgressChanged()
    }

    mutating func resourceAnnounced(_ id: Int64, _ location: String, _ ledger: AgentLedger) {
        guard tasks.attached.contains(id), tasks.machines[id] != nil else { return }
        _ = try? withMachine(id, ledger) { m, _ in m.resourceAnnounced(location) }
    }

    /// TasksProgressed rides on the docks' twice-a-second wake: no timer of its own.
    mutating func reportProgress() {
        out += user.report(record: { tasks.machines[$0]?.record }, app: sessions.app)
    }

    mutating func transferEnded(_ id: Int64, received: Int64, _ outcome: TransferOutcome, _ ledger: AgentLedger) {
        guard let r = tasks.detach(id) else { return }
        turnStart?.detached.insert(id)
        launcherProgressChanged()
        if outcome.curlCode != 0 || outcome.stalledSeconds != nil {
            log(
                .info,
                "task \(id): attempt ended: curl \(outcome.curlCode) HTTP \(outcome.httpStatus) "
                    + "\(outcome.rejection ?? outcome.curlMessage)"
            )
        }
        let reachable = world.network.available || DownloadURL.isLoopback(host: r.host)
        let backoff = settings.backoff, deadline = deadline(r), random = random(id)
        let canChallenge = config(r.session).keepEvents, recheck = settings.spaceRecheck
        let userAnswers = config(r.session).app.isEmpty
        if tryRememberedCredential(r, received: received, outcome, canChallenge: canChallenge, ledger) {
            wake(.schedule)
            return
        }
        // Which credentials the task's next challenge answer is for: the proxy's or the server's.
        if outcome.asksProxyCredentials {
            tasks.proxyAsked.insert(id)
        } else if outcome.httpStatus == 401 {
            tasks.proxyAsked.remove(id)
        }
        let ended = try? withMachine(id, ledger) { m, now in
            _ = m.progressed(received: received, now: now)
            return m.transferEnded(
                outcome, backoff: backoff, resourceDeadline: deadline, now: now, random: random,
                networkAvailable: reachable, canChallenge: canChallenge,
                userAnswers: userAnswers, spaceRecheck: recheck)
        }
        logIfFailed(ended)
        wake(.schedule)
    }

    /// A task that failed for good is worth a warning (`journalctl -p warning` shows it), naming
    /// the task and why; an attempt that will be retried stays at info.
    private mutating func logIfFailed(_ r: TaskRecord?) {
        guard let r, r.state == .failed else { return }
        log(.warning, "task \(r.id) failed: \(r.error ?? "no reason given") (\(Self.displayName(r)))")
    }

    /// ENOSPC waits for space; anything else fails clearly.
    mutating func transferCouldNotStart(_ id: Int64, _ outcome: TransferOutcome, _ ledger: AgentLedger) {
        guard let r = tasks.detach(id) else { return }
        turnStart?.detached.insert(id)
        let backoff = settings.backoff, deadline = deadline(r), random = random(id), recheck = settings.spaceRecheck
        logIfFailed(
            try? withMachine(id, ledger) { m, now in
                m.transferEnded(
                    outcome, backoff: backoff, resourceDeadline: deadline, now: now, random: random,
                    spaceRecheck: recheck)
            })
        wake(.schedule)
    }

    /// Backoff jitter without a random source: the task id and the time spread retries well enough.
    func random(_ id: Int64) -> Double {
        var x = UInt64(bitPattern: now) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: id)
        x ^= x >> 31; x &*= 0xBF58_476D_1CE4_E5B9; x ^= x >> 29
        return Double(x % 1_000_000) / 1_000_000
    }

    func deadline(_ r: TaskRecord) -> Int64? {
        r.created + Int64(config(r.session).resourceTimeout) * 1_000_000
    }

    mutating func finalized(_ id: Int64, _ result: FinalizeResult, _ ledger: AgentLedger) {
        guard tasks.finalizing.remove(id) != nil else { return }
        turnStart?.finalized.insert(id)
        guard tasks.machines[id] != nil else { return }
        let recheck = settings.spaceRecheck
        let quarantine = settings.state.quarantined(id)
        let record = try? withMachine(id, ledger) { m, now in
            switch result {
            case .saved(let path, _):
                return m.finalized(file: path, now: now)
            case .noSpace(let message):
                return m.finalizeNeedsSpace(message: message, recheck: recheck, now: now)
            case .folderMissing(let message):
                return m.finalizeNeedsFolder(message: message, recheck: recheck, now: now)
            case .checksumMismatch(let message):
                let kept = message + "; the bytes are kept apart in \(quarantine) (never delivered)"
                return m.checksumMismatched(message: kept, now: now)
            case .failed(let name, let message):
                return m.finalizeFailed(name: name, message: message, now: now)
            }
        }
        switch (result, record?.state) {
        case (.saved(let path, let cleanup), .completed?):
            log(.info, "task \(id): complete: \(path)")
            // Once committed, the staging name (and a copy's second name) are no longer needed.
            // The staging name is the agent's; a copy's second name is in the destination folder.
            let (own, inDestination) = (
                cleanup.filter(settings.state.contains), cleanup.filter { !settings.state.contains($0) }
            )
            if !own.isEmpty { out.append(.removeFiles(own, confined: false)) }
            if !inDestination.isEmpty {
                out.append(.removeFiles(inDestination, confined: !config(record?.session ?? "").app.isEmpty))
            }
        case (.noSpace(let message), _): log(.warning, "task \(id): waiting for space: \(message)")
        case (.folderMissing(let message), _): log(.warning, "task \(id): waiting for its folder: \(message)")
        case (.checksumMismatch(let message), _), (.failed(_, let message), _):
            log(.warning, "task \(id): failed: \(message)")
        default: break
        }
        if record?.state != .running {
            rememberMachine(id)
            tasks.machines[id] = nil
        }
        wake(.schedule)
    }

    // MARK: - Telling the user

    private mutating func tellUser(_ event: SessionEvent, _ r: TaskRecord) {
        let c = config(r.session)
        guard c.popups else { return }
        emit(user.taskEvent(event, name: Self.displayName(r), appSession: c.app.isEmpty ? nil : r.session, now: now))
    }

    /// Progress reaches docks at most twice a second, and only while something transfers.
    mutating func launcherProgressChanged() { wake(.launcher, at: now + 500_000) }
}
