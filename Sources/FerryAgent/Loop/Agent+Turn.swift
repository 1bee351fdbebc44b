import Dispatch
import FerryBus
import FerryCore
import Glibc
import Logging

/// A turn: one transaction for the store writes of the inputs it handles, then the other
/// effects, once it committed (see `Agent`).
extension Agent {
    // MARK: - Turns

    /// Handles one input in a turn of its own.
    func feed(_ input: AgentInput) { turn { handle(input) } }

    /// Runs `body` as one turn: one transaction for every store write, then the other effects.
    /// Nested turns join the outer one. Returns whether the turn committed.
    @discardableResult
    func turn(_ body: () -> Void) -> Bool {
        if open.isOpen { body(); return true }
        open.isOpen = true
        open.storeFailure = nil
        var committed = true
        do {
            try store.batch {
                body()
                if let failure = open.storeFailure { throw failure }
            }
            for e in core.committed() { open.afterCommit(e) }
        } catch {
            log.error("cannot save the agent's state, undoing the last changes: \(error)")
            open.lastFailure = error
            committed = false
            _ = open.takeAfterCommit()
            for e in core.commitFailed(now: MainLoop.now) { route(e) }
        }
        open.isOpen = false
        open.seam.turnEnded(committed: committed)
        let work = open.takeAfterCommit()
        // Messages queue behind the turn's sync in the outbox; what would reveal the turn by
        // other ways (a popup, an app launched, files moved or deleted) waits for that sync too.
        let awaitsSync = committed && store.lastBatchAwaitsSync
        var afterSync: [AgentEffect] = []
        for e in work {
            if awaitsSync && e.revealsOutsideTheBus { afterSync.append(e) } else { carryOut(e) }
        }
        if !afterSync.isEmpty {
            outbox.send { MainLoop.idle { [weak self] in for e in afterSync { self?.carryOut(e) } } }
        }
        return committed
    }

    func handle(_ input: AgentInput) {
        assert(open.isOpen && !CurlMulti.insideCurl, "an agent input outside a turn or inside a curl callback")
        open.seam.input(input)
        for e in core.handle(input, now: MainLoop.now, ledger: store) { route(e) }
    }

    func handle<R: CoreRequest>(request r: R, from app: SandboxedApp?) throws -> R.Reply {
        let (reply, effects) = try core.answer(r, from: app, now: MainLoop.now, ledger: store)
        for e in effects { route(e) }
        return reply
    }

    /// Store writes now (in the turn's transaction), wakes now, the rest after the commit.
    private func route(_ e: AgentEffect) {
        switch e {
        case .store(let w):
            guard open.storeFailure == nil else { return }
            do { try store.apply(w, now: MainLoop.now) } catch { open.storeFailure = error }
            open.seam.wrote(w)
        case .wake(let wake, let at):
            wakes.arm(wake, at: at)
        case .continueBody(let id, let decision):
            // At once, within the round: the paused transfer's bytes reach its file in it.
            transfers.continueBody(id, decision)
        default:
            open.afterCommit(e)
        }
    }

    // MARK: - Effects

    private func carryOut(_ e: AgentEffect) {
        defer { open.seam.carriedOut(e) }
        switch e {
        case .startTransfer(let r, let plan, _, let credential):  // the core watches for stalls
            log.debug("task \(r.id): starting at byte \(plan.offset)")
            transfers.start(r, plan, credential: credential)
        case .stopTransfer(let id): transfers.stop(id)
        case .dropConnections: transfers.dropConnections()
        case .speedLimits(let allowances): transfers.limitSpeeds(allowances)
        case .finalize(let r, let dir, let confined):
            finalize(r, defaultDirectory: dir ?? XDG.downloadDirectory, confined: confined)
        case .discardBytes(let id):
            unlink(state.staged(id))
            unlink(state.quarantined(id))
        case .quarantine(let id):
            rename(state.staged(id), state.quarantined(id))
        case .adoptStagedBytes(let from, let to):
            rename(state.staged(from), state.staged(to))
        case .forgetCookies(let jar):
            transfers.forgetCookies(jar)
            unlink(jar)
        case .removeFiles(let paths, let confined):  // on the worker: unlinking costs a file system too
            workers.files.async { [log] in
                for p in paths {
                    if let why = ConfinedFolder.remove(p, confined: confined) {
                        log.warning("did not remove \(p): \(why)")
                    }
                }
            }
        case .keepCredential(let key, let credential): desktop.keyring.keep(key, credential)
        case .findCredential(let id, let keys):
            desktop.keyring.find(keys) { [weak self] in self?.feed(.credentialFound(task: id, $0)) }
        case .forgetCredential(let key): desktop.keyring.forget(key)
        case .taskChanged(let id, let state, let app): signals.taskChanged(id, state, app)
        case .tasksRemoved(let ids, let app): signals.tasksRemoved(ids, app)
        case .tasksProgressed(let moved, let app): signals.tasksProgressed(moved, app)
        case .eventsAvailable(let session, let seq, let app): signals.eventsAvailable(session, seq, app)
        case .popup(let outcome): desktop.notifier.post(outcome)
        case .launcherChanged: signals.launcherChanged()
        case .launch(let session, let target): launch(session, target)
        case .log(let level, let message): log.log(level: level.logger, "\(message)")
        case .store, .wake, .continueBody: break
        }
    }
}

private extension LogLevel {
    var logger: Logger.Level {
        switch self {
        case .debug: .debug;
        case .info: .info;
        case .warning: .warning;
        case .error: .error
        }
    }
}

private extension AgentEffect {
    /// Shows the user, or another program, what a turn did without going through the bus.
    var revealsOutsideTheBus: Bool {
        switch self {
        case .popup, .launch, .finalize, .removeFiles: return true
        default: return false
        }
    }
}
