import FerryBus
import FerryCore
import Dispatch
import FoundationEssentials
import Glibc
import Logging

/// The agent's shell: hands every input to the core (`AgentCore`, where all decisions live)
/// and carries out the effects it returns. Runs entirely on the GLib main loop thread.
///
/// One loop turn (a request, a round of curl's work, a wake) is one transaction: the core's
/// store writes run inside it as they come, and everything else waits until it committed
/// (group commit). If it cannot commit, the core undoes the turn in memory and nothing else
/// happens.
public final class Agent {
    var settings: AgentSettings
    /// Opened by `start`, once the bus name is this agent's: the store is locked to one agent,
    /// and a replaced agent lets go of it only as it exits.
    private(set) var store: Store!
    let log: Logger
    var core: AgentCore
    let transfers: Transfers
    let notifier: Notifier
    let keyring: Keyring
    let network = NetworkWatch()
    let mounts = MountWatch()
    /// Signs resume data handed out and checks what comes back.
    let resumeSeal: ResumeSeal
    private let wakes = Wakes()
    /// Replies, signals and the store's syncs leave the loop through here, in order.
    let outbox = BusOutbox()
    /// Checksums, fsyncs and copies of finished files: never on the loop thread.
    private let fileWorker = DispatchQueue(label: "dev.ferry.agent.files")
    private let uploadCopiers = UploadCopy.Queues()
    private lazy var finalizing = FinalizeBatches(worker: fileWorker) { [weak self] results in
        guard let self else { return }
        turn { for (id, result) in results { self.handle(.finalized(task: id, result)) } }
    }
    /// Hooks for the bus layer; the last argument is the sandboxed app the signal is about ("" = host).
    var onEventsAvailable: (String, UInt64, String) -> Void = { _, _, _ in }
    var onTaskChanged: (Int64, TaskState, String) -> Void = { _, _, _ in }
    var onTasksRemoved: ([Int64], String) -> Void = { _, _ in }
    var onTasksProgressed: ([TaskProgress], String) -> Void = { _, _ in }
    var onLauncherChanged: () -> Void = {}

    // The open turn.
    private var inTurn = false
    private var storeFailure: Error?
    /// Why the last turn that could not commit failed.
    private var turnFailure: Error?
    private var afterCommit: [AgentEffect] = []
    /// Where each task's TaskChanged waits in `afterCommit`: a turn signals a task's last state once.
    private var taskChangedAt: [Int64: Int] = [:]
    private var crashSeam = CrashSeam()

    public init(settings: AgentSettings, logger: Logger) throws {
        self.settings = settings
        log = logger
        let state = StateFolder(settings.stateDirectory)
        guard Paths.mkdirAll(state.staging, mode: 0o700), Paths.mkdirAll(state.quarantine, mode: 0o700) else {
            throw FerryError(.failed, "cannot create the state directory \(settings.stateDirectory)")
        }
        chmod(settings.stateDirectory, 0o700)
        resumeSeal = try ResumeSeal(keyFile: state.resumeKey)
        core = AgentCore(settings: settings.core)
        notifier = Notifier(logger: logger)
        keyring = Keyring(log: logger)
        notifier.enabled = settings.popups
        notifier.windowMilliseconds = settings.popupWindowMilliseconds
        let inbox = state.inboxes
        notifier.appOwned = { $0.hasPrefix(inbox) }
        transfers = Transfers(settings: settings)
        transfers.feed = { [unowned self] input in
            turn {  // a curl round's turn, or one of its own (a transfer prepared off the loop)
                handle(input)
            }
        }
        // A round of curl's work is one turn: its transfers' changes commit together.
        transfers.around = { [unowned self] work in turn(work) }
        wakes.fired = { [unowned self] wake in feed(.wake(wake)) }
    }

    /// Restores state after a start (or a crash) and starts whatever may run.
    public func start() throws {
        store = try openStore()
        let staged = removeLeftoversOfCompletedTasks()
        try removeUnusedUploadCopies()
        let requeued = try store.requeueInterrupted(now: MainLoop.now)
        if requeued > 0 { log.info("resuming \(requeued) transfer(s) interrupted by the last shutdown") }
        var state = AgentStartState(
            queues: try store.loadEventQueues(), sessions: try store.allSessions(),
            badge: Int(try store.meta("badge") ?? "0") ?? 0, lastTaskID: try store.lastTaskID(),
            network: network.state, staged: staged)
        let leaked = try store.tasksWithURLCredentials()
        state.urlCredentials = leaked ?? []
        notifier.onActivated = { [weak self] in self?.feed(.popupActivated(appSession: $0)) }
        network.onChange = { [weak self] state in
            self?.transfers.networkChanged(); self?.feed(.networkChanged(state))
        }
        mounts.onChange = { [weak self] in self?.feed(.mountsChanged) }
        if state.urlCredentials.isEmpty { feed(.started(state)) } else { try store.scrubbing { feed(.started(state)) } }
        if leaked != nil { try store.setMeta(Store.credentialsMoved, "1") }  // after the turn's commit: once
    }

    var storePath: String { state.store }
    /// The state folder's layout.
    var state: StateFolder { StateFolder(settings.stateDirectory) }

    private func openStore() throws -> Store {
        let store = try Store(path: storePath)
        // A turn's sync runs on the outbox ahead of its messages: the loop goes on meanwhile.
        store.syncLater = { [outbox, logSync = store.logSync, log] in
            outbox.send {
                do { try logSync.sync() } catch {
                    // The kernel may have dropped the pages it could not write (fsync's error
                    // is reported once): going on could report changes that are not on disk.
                    log.critical(
                        "cannot make the agent's store durable (\(error)): exiting; a restart reloads what is on disk")
                    fflush(stderr)
                    _exit(74)  // EX_IOERR
                }
            }
        }
        return store
    }

    /// Stops every transfer so that it resumes on the next start; bytes on disk are kept.
    public func shutdown() {
        guard store != nil else { return }  // never started (the name was another agent's)
        let received = transfers.stopAll()
        feed(.stopping(received: received))
    }

    /// A request from the bus: its answer, given only once its changes are durable.
    func request(_ r: AgentRequest) throws -> AgentReply {
        // Only a call to the agent's unique name can come before the well-known name is its own.
        guard store != nil else {
            throw FerryError(.storeUnavailable, "the agent is starting: its store is not open yet")
        }
        var reply: Result<AgentReply, Error> = .success(.none)
        let committed = turn { reply = Result { try handle(request: r) } }
        let answer = try reply.get()
        guard committed else {
            if let e = turnFailure as? FerryError, e.kind == .storeUnavailable { throw e }
            throw FerryError(
                .storeUnavailable,
                "cannot record the request: the agent's store cannot commit (\(turnFailure.map { "\($0)" } ?? "?"), "
                    + "is its disk full?); nothing was queued or changed"
            )
        }
        return answer
    }

    /// Live figures for the dock.
    var launcherState: (count: Int, progress: Double, transferring: Bool) { core.launcherState }
    func app(ofSession session: String) -> String { core.app(ofSession: session) }

    // MARK: - Turns

    /// Handles one input in a turn of its own.
    func feed(_ input: AgentInput) { turn { handle(input) } }

    /// Runs `body` as one turn: one transaction for every store write, then the other effects.
    /// Nested turns join the outer one. Returns whether the turn committed.
    @discardableResult
    func turn(_ body: () -> Void) -> Bool {
        if inTurn { body(); return true }
        inTurn = true
        storeFailure = nil
        var committed = true
        do {
            try store.batch {
                body()
                if let storeFailure { throw storeFailure }
            }
            core.committed()
        } catch {
            log.error("cannot save the agent's state, undoing the last changes: \(error)")
            turnFailure = error
            committed = false
            afterCommit = []
            taskChangedAt = [:]
            for e in core.commitFailed(now: MainLoop.now) { route(e) }
        }
        inTurn = false
        crashSeam.turnEnded(committed: committed)
        let work = afterCommit
        afterCommit = []
        taskChangedAt = [:]
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

    private func handle(_ input: AgentInput) {
        assert(inTurn && !CurlMulti.insideCurl, "an agent input outside a turn or inside a curl callback")
        crashSeam.input(input)
        // Only requests throw, and they come through `handle(request:)`.
        for e in (try? core.handle(input, now: MainLoop.now, ledger: store)) ?? [] { route(e) }
    }

    private func handle(request r: AgentRequest) throws -> AgentReply {
        var reply = AgentReply.none
        for e in try core.handle(.request(r), now: MainLoop.now, ledger: store) {
            if case .reply(let answer) = e { reply = answer } else { route(e) }
        }
        return reply
    }

    /// Store writes now (in the turn's transaction), wakes now, the rest after the commit.
    private func route(_ e: AgentEffect) {
        switch e {
        case .store(let w):
            guard storeFailure == nil else { return }
            do { try store.apply(w, now: MainLoop.now) } catch { storeFailure = error }
            crashSeam.wrote(w)
        case .wake(let wake, let at):
            wakes.arm(wake, at: at)
        case .continueBody(let id, let decision):
            // At once, within the round: the paused transfer's bytes reach its file in it.
            transfers.continueBody(id, decision)
        case .reply:
            break
        case .taskChanged(let id, _, _):
            if let i = taskChangedAt[id] {
                afterCommit[i] = e
            } else {
                taskChangedAt[id] = afterCommit.count; afterCommit.append(e)
            }
        default:
            afterCommit.append(e)
        }
    }

    // MARK: - Effects

    private func carryOut(_ e: AgentEffect) {
        defer { crashSeam.carriedOut(e) }
        switch e {
        case .startTransfer(let r, let plan, _, let credential):  // the core watches for stalls
            log.debug("task \(r.id): starting at byte \(plan.offset)")
            transfers.start(r, plan, credential: credential)
        case .stopTransfer(let id): transfers.stop(id)
        case .dropConnections: transfers.dropConnections()
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
            fileWorker.async { [log] in
                for p in paths {
                    if let why = ConfinedFolder.remove(p, confined: confined) {
                        log.warning("did not remove \(p): \(why)")
                    }
                }
            }
        case .keepCredential(let key, let credential): keyring.keep(key, credential)
        case .findCredential(let id, let keys):
            keyring.find(keys) { [weak self] in self?.feed(.credentialFound(task: id, $0)) }
        case .forgetCredential(let key): keyring.forget(key)
        case .taskChanged(let id, let state, let app): onTaskChanged(id, state, app)
        case .tasksRemoved(let ids, let app): onTasksRemoved(ids, app)
        case .tasksProgressed(let moved, let app): onTasksProgressed(moved, app)
        case .eventsAvailable(let session, let seq, let app): onEventsAvailable(session, seq, app)
        case .popup(let outcome): notifier.post(outcome)
        case .launcherChanged: onLauncherChanged()
        case .launch(let session, let target): launch(session, target)
        case .log(let level, let message): log.log(level: level.logger, "\(message)")
        case .reply, .store, .wake, .continueBody: break
        }
    }

    /// Runs file work (copying, syncing) off the loop; `then` gets its result back on the loop.
    /// Copies of descriptors handed over for upload, beside the file worker, one queue an owner.
    func onUploadCopier<T>(owner: String, _ work: @escaping () -> T, then: @escaping (T) -> Void) {
        on(uploadCopiers.queue(owner), work, then: then)
    }

    private func on<T>(_ queue: DispatchQueue, _ work: @escaping () -> T, then: @escaping (T) -> Void) {
        queue.async {
            let result = work(); MainLoop.idle { then(result) }
        }
    }

    /// Verifies and moves a finished file on the worker thread; results come back to the loop
    /// in batches, one turn each.
    private func finalize(_ r: TaskRecord, defaultDirectory: String, confined: Bool) {
        finalizing.add(
            .init(
                record: r, staging: state.staged(r.id), defaultDirectory: defaultDirectory, confined: confined,
                mode: settings.deliveredFileMode))
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
