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
    /// Where a damaged store was moved at this start (GetStatus says so), else nil.
    private(set) var damagedStore: String?
    let log: Logger
    var core: AgentCore
    /// Where the user's downloads go when they name no folder (`SessionRules.defaultDirectory`
    /// for the host's sessions): --download-dir, else the setting, else the XDG folder.
    var defaultDownloadFolder: String {
        core.settings.downloadDirectory ?? core.settings.downloadFolder ?? XDG.downloadDirectory
    }
    let transfers: Transfers
    /// Popups, the keyring, the network and the mounts.
    let desktop: DesktopLinks
    /// Signs resume data handed out and checks what comes back.
    let resumeSeal: ResumeSeal
    let wakes = Wakes()
    /// Replies, signals and the store's syncs leave the loop through here, in order.
    let outbox = BusOutbox()
    /// The threads that do file work off the loop.
    let workers = FileWorkers()
    private lazy var finalizing = FinalizeBatches(worker: workers.files) { [weak self] results in
        guard let self else { return }
        turn { for (id, result) in results { self.handle(.finalized(task: id, result)) } }
    }
    /// What the bus layer hears of.
    var signals = AgentSignals()
    var open = OpenTurn()

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
        let notifier = Notifier(logger: logger)
        desktop = DesktopLinks(notifier: notifier, keyring: Keyring(log: logger))
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
        var (state, leaked): (AgentStartState, [TaskRecord]?)
        do {
            (state, leaked) = try loadState()
        } catch  where StoreDamage.isDamage(error) {
            // Else the agent would exit at every start, and every call fail, until someone reads the journal.
            store = nil  // closes the damaged file
            let aside = StoreDamage.moveAside(storePath, now: MainLoop.now)
            let found = StoreDamage.readable(aside)
            let unfinished = found.tasks.filter { !$0.state.isFinal }.count
            damagedStore = aside
            let back = "\(found.tasks.count) task(s) read back (\(unfinished) unfinished, paused: ferry resume --all)"
            let moved = "the store \(storePath) is damaged (\(error)): moved aside to \(aside)"
            log.critical("\(moved); started with a new one, \(back); partial downloads kept")
            desktop.notifier.post(.storeDamaged(recovered: unfinished))
            (state, leaked) = try loadState(restoring: found)
        }
        desktop.notifier.onActivated = { [weak self] in self?.feed(.popupActivated(appSession: $0)) }
        desktop.network.onChange = { [weak self] state in
            self?.transfers.networkChanged(); self?.feed(.networkChanged(state))
        }
        desktop.mounts.onChange = { [weak self] in self?.feed(.mountsChanged) }
        if state.urlCredentials.isEmpty { feed(.started(state)) } else { try store.scrubbing { feed(.started(state)) } }
        if leaked != nil { try store.setMeta(Store.credentialsMoved, "1") }  // after the turn's commit: once
    }

    /// The store, read: its tasks' state for the core (and tasks that had credentials in their
    /// URL). `restoring`: what was read back of a damaged store, written into the new one first.
    private func loadState(restoring found: StoreDamage.Readable? = nil) throws -> (AgentStartState, [TaskRecord]?) {
        store = try openStore()
        if let found {
            try store.restore(found, stagedIDs: stagedTaskIDs(), now: MainLoop.now)
        }
        let staged = removeLeftoversOfCompletedTasks()
        // A store read back from a damaged one may lack tasks whose copies these are: kept.
        if found == nil { try removeUnusedUploadCopies() }
        let requeued = try store.requeueInterrupted(now: MainLoop.now)
        if requeued > 0 { log.info("resuming \(requeued) transfer(s) interrupted by the last shutdown") }
        var state = AgentStartState(
            queues: try store.loadEventQueues(), sessions: try store.allSessions(),
            badge: Int(try store.meta("badge") ?? "0") ?? 0, lastTaskID: try store.lastTaskID(),
            network: desktop.network.state, staged: staged)
        let leaked = try store.tasksWithURLCredentials()
        state.urlCredentials = leaked ?? []
        return (state, leaked)
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

    /// A request from the bus (`app`: a sandboxed app's): its answer, given only once its
    /// changes are durable.
    func request<R: CoreRequest>(_ r: R, from app: SandboxedApp? = nil) throws -> R.Reply {
        // Only a call to the agent's unique name can come before the well-known name is its own.
        guard store != nil else {
            throw FerryError(.storeUnavailable, "the agent is starting: its store is not open yet")
        }
        var reply: Result<R.Reply, Error>?
        let committed = turn { reply = Result { try handle(request: r, from: app) } }
        guard let reply else { throw FerryError(.failed, "internal error: the request's turn did not run") }
        let answer = try reply.get()
        guard committed else {
            if let e = open.lastFailure as? FerryError, e.kind == .storeUnavailable { throw e }
            let why = open.lastFailure.map { "\($0)" } ?? "?"
            throw FerryError(
                .storeUnavailable,
                "cannot record the request: the agent's store cannot commit (\(why), is its disk full?); "
                    + "nothing was queued or changed"
            )
        }
        return answer
    }

    /// Live figures for the dock.
    var launcherState: (count: Int, progress: Double, transferring: Bool) { core.launcherState }
    func app(ofSession session: String) -> String { core.app(ofSession: session) }

    /// Runs file work (copying, syncing) off the loop; `then` gets its result back on the loop.
    /// Copies of descriptors handed over for upload, beside the file worker, one queue an owner.
    func onUploadCopier<T>(owner: String, _ work: @escaping () -> T, then: @escaping (T) -> Void) {
        on(workers.uploadCopiers.queue(owner), work, then: then)
    }

    private func on<T>(_ queue: DispatchQueue, _ work: @escaping () -> T, then: @escaping (T) -> Void) {
        queue.async {
            let result = work(); MainLoop.idle { then(result) }
        }
    }

    /// Verifies and moves a finished file on the worker thread; results come back to the loop
    /// in batches, one turn each.
    func finalize(_ r: TaskRecord, defaultDirectory: String, confined: Bool) {
        finalizing.add(
            .init(
                record: r, staging: state.staged(r.id), defaultDirectory: defaultDirectory, confined: confined,
                mode: settings.deliveredFileMode))
    }
}
