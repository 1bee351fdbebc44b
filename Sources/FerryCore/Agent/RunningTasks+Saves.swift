/// A finished transfer's file saved (or not), and tasks leaving the list.
extension RunningTasks {
    /// The shell verified and moved the task's file (or could not).
    mutating func finalized(_ id: Int64, _ result: FinalizeResult, _ ctx: TaskContext) -> TaskSteps {
        guard finalizing.remove(id) != nil else { return TaskSteps() }
        journal.finalized.insert(id)
        guard machines[id] != nil else { return TaskSteps() }
        let recheck = ctx.settings.spaceRecheck, state = ctx.settings.state
        let quarantine = state.quarantined(id), session = machines[id]?.record.session ?? ""
        let steps = try? step(id, ctx) { m, now in
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
        var out = steps ?? TaskSteps()
        switch (result, out.state) {
        case (.saved(let path, let cleanup), .completed?):
            journal.saved.append(SavedFile(task: id, path: path))
            // Once committed, the staging name (and a copy's second name) are no longer needed.
            // The staging name is the agent's; a copy's second name is in the destination folder.
            let (own, inDestination) = (cleanup.filter(state.contains), cleanup.filter { !state.contains($0) })
            if !own.isEmpty { out.effects.append(.removeFiles(own, confined: false)) }
            if !inDestination.isEmpty {
                out.effects.append(
                    .removeFiles(inDestination, confined: !ctx.config(session).app.isEmpty))
            }
        case (.noSpace(let message), _):
            out.effects.append(.log(.warning, "task \(id): waiting for space: \(message)"))
        case (.folderMissing(let message), _):
            out.effects.append(.log(.warning, "task \(id): waiting for its folder: \(message)"))
        case (.checksumMismatch(let message), _), (.failed(_, let message), _):
            out.effects.append(.log(.warning, "task \(id): failed: \(message)"))
        default: break
        }
        if out.state != .running { forget(id) }
        out.effects.append(.wake(.schedule, at: nil))
        return out
    }

    /// A file being verified and moved into place is past stopping: its bytes are all there.
    /// The task has every byte and its file is being moved into place.
    func isSaving(_ id: Int64) -> Bool { finalizing.contains(id) }

    func notSaving(_ id: Int64) throws {
        guard !finalizing.contains(id) else {
            throw FerryError(
                .invalidState,
                "task \(id) has every byte and is being saved to its destination; it can no longer be paused or "
                    + "canceled"
            )
        }
    }

    /// Ended tasks leave the list; the user's files stay, kept partial and quarantined bytes go.
    /// All or nothing.
    mutating func remove(_ ids: [Int64], _ ctx: TaskContext) throws -> TaskSteps {
        var owners: [String: [Int64]] = [:], replies: [Bool: [String]] = [:]
        for id in ids {
            let r = try shownTask(id, ctx.ledger)
            guard r.state.isFinal, !finalizing.contains(id) else {
                throw FerryError(
                    .invalidState, "task \(id) is \(r.state.rawValue): cancel it before removing it from the list")
            }
            owners[ctx.app(r.session), default: []].append(id)
            if let reply = r.replyFile { replies[!ctx.config(r.session).app.isEmpty, default: []].append(reply) }
        }
        var steps = TaskSteps()
        steps.effects.append(.store(.deleteTasks(ids)))
        for (app, list) in owners.sorted(by: { $0.key < $1.key }) {
            steps.effects.append(.tasksRemoved(list, app: app))
        }
        // the uploads' replies: the agent's, not the user's
        for (confined, files) in replies.sorted(by: { !$0.key && $1.key }) {
            steps.effects.append(.removeFiles(files, confined: confined))
        }
        for id in ids {
            steps.effects.append(.discardBytes(id))
            forget(id)
            steps.notes.append(.spaceWaitOver(id))
        }
        return steps
    }

    /// Retention: ended tasks older than `keepEnded` leave the list (their files stay).
    mutating func prune(_ ctx: TaskContext) -> TaskSteps {
        let keep = ctx.settings.keepEnded
        do {
            let old = try ctx.ledger.endedTaskIDs(session: nil, updatedBefore: ctx.now - keep)
            guard !old.isEmpty else { return TaskSteps() }
            var steps = try remove(old, ctx)
            steps.effects.append(
                .log(
                    .info,
                    "removed \(old.count) task(s) that ended more than \(keep / 86_400_000_000) day(s) ago "
                        + "from the list"
                ))
            return steps
        } catch {
            return TaskSteps(effects: [.log(.error, "cannot prune ended tasks: \(error)")])
        }
    }

    /// The store commits again: tasks it refused continue from their bytes (their rows are
    /// queued: a start writes none).
    mutating func storeRecheck() -> [AgentEffect] {
        guard !storeBlocked.isEmpty else { return [] }
        defer { storeBlocked.removeAll() }
        return [
            .log(.info, "the store commits again: \(storeBlocked.count) task(s) continue"),
            .wake(.schedule, at: nil),
        ]
    }
}

/// A file a turn completed, for the log.
struct SavedFile: Sendable {
    var task: Int64
    var path: String

    /// A line a file, or one line for a turn that completed more than `eachUpTo`: a bulk download
    /// finishes thousands of small files a second, and as many lines would cost the agent and the
    /// journal their time, and reach the journal's rate limit (10,000 in 30 s by default), which
    /// then drops the agent's warnings too. Every file stays in `ferry list`.
    static func log(_ saved: [SavedFile], eachUpTo: Int = 3) -> [AgentEffect] {
        guard saved.count > eachUpTo, let first = saved.first, let last = saved.last else {
            return saved.map { .log(.info, "task \($0.task): complete: \($0.path)") }
        }
        let span = "from task \(first.task): \(first.path) to task \(last.task): \(last.path)"
        return [.log(.info, "\(saved.count) tasks complete, \(span)")]
    }
}
