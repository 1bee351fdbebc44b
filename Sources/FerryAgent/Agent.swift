import FerryCore
import Foundation
import Glibc
import Logging

/// Agent-wide settings (ferryd's command line).
public struct AgentSettings: Sendable {
    public var stateDirectory: String = Paths.defaultStateDirectory
    public var maxTotal = 6
    public var maxPerHost = 2
    public var backoff = Backoff()
    public var transfer = TransferSettings()
    public var downloadDirectory: String? = nil
    /// Global popup switch (sessions may also opt out).
    public var popups = true
    public var popupWindowMilliseconds: UInt32 = 1_000
    /// First look at a full disk again after this long (doubling up to ten times as long).
    public var spaceRecheckMilliseconds: Int64 = 30_000
    /// Ended tasks leave the list by themselves after this long (0: never). Files stay.
    public var keepEndedMicroseconds: Int64 = 30 * 86_400 * 1_000_000
    public init() {}
}

/// The agent: turns requests and transfer results into task-machine events and carries
/// out the actions the machines return. Runs entirely on the GLib main loop thread.
public final class Agent {
    let settings: AgentSettings
    let store: Store
    let curl: CurlMulti
    let log: Logger
    var scheduler: Scheduler
    /// Machines of running tasks only; every other task lives in the store.
    var machines: [Int64: TaskMachine] = [:]
    var transfers: [Int64: Transfer] = [:]
    var queues: [String: EventQueue] = [:]
    /// Sequence numbers reserved in the store per session (see `emit`).
    var reservedSeq: [String: UInt64] = [:]
    var sessions: [String: SessionConfig] = [:]
    /// Bus peers (unique names) that opened each session and are still on the bus.
    var clients: [String: Set<String>] = [:]
    var relaunch: [String: RelaunchPolicy] = [:]
    var relaunchTimers: [String: UInt32] = [:]
    /// Answers to authentication challenges: memory only, never stored or logged.
    var credentials: [Int64: Credential] = [:]
    var retryTimer: UInt32 = 0
    /// Tasks whose last change the store refused (disk full): they wait until it commits again.
    var storeBlocked: Set<Int64> = []
    var storeRecheckTimer: UInt32 = 0
    /// When ended tasks were last pruned from the list (see `pruneEndedTasks`).
    var lastPrune: Int64 = 0
    /// What the network monitor said last (nil before the first look).
    var networkWasAvailable: Bool?
    /// Tasks whose file is being verified and moved into place on the worker thread.
    var finalizing: Set<Int64> = []
    /// Tasks the user was told wait for disk space (one popup each, not one per recheck).
    var spaceWarned: Set<Int64> = []
    /// Checksums, fsyncs and copies of finished files: never on the loop thread.
    let fileWorker = DispatchQueue(label: "dev.ferry.agent.files")
    var scheduleQueued = false
    var signalsPending: Set<String> = []
    let network = NetworkWatch()
    let notifier: Notifier
    /// Downloads the user was told about since they last looked (the app-icon badge).
    private(set) var badge = 0
    /// The dock entry changed (badge, or the overall progress of running transfers).
    var onLauncherChanged: () -> Void = {}
    private var launcherTimer: UInt32 = 0
    /// Hooks for the bus layer (signals).
    var onEventsAvailable: (String, UInt64) -> Void = { _, _ in }
    var onTaskChanged: (Int64, TaskState) -> Void = { _, _ in }

    var stagingDirectory: String { settings.stateDirectory + "/staging" }
    /// Per-session folders where finished files wait for their app.
    static func inboxRoot(_ settings: AgentSettings) -> String { settings.stateDirectory + "/inbox/" }
    func stagingPath(_ id: Int64) -> String { "\(stagingDirectory)/\(id).part" }
    /// Removes a task's kept partial (staging) or quarantined bytes; never a delivered file.
    func discardBytes(_ id: Int64) {
        unlink(stagingPath(id))
        unlink(quarantinePath(id))
    }
    /// Finished bytes that failed their checksum: kept for the user to look at, never delivered.
    var quarantineDirectory: String { settings.stateDirectory + "/quarantine" }
    func quarantinePath(_ id: Int64) -> String { "\(quarantineDirectory)/\(id).part" }

    public init(settings: AgentSettings, logger: Logger) throws {
        self.settings = settings
        self.log = logger
        guard Paths.mkdirAll(settings.stateDirectory + "/staging", mode: 0o700),
              Paths.mkdirAll(settings.stateDirectory + "/quarantine", mode: 0o700) else {
            throw FerryError(.failed, "cannot create the state directory \(settings.stateDirectory)")
        }
        chmod(settings.stateDirectory, 0o700)
        store = try Store(path: settings.stateDirectory + "/ferry.sqlite3")
        scheduler = Scheduler(maxTotal: settings.maxTotal, maxPerHost: settings.maxPerHost)
        notifier = Notifier(logger: logger)
        notifier.enabled = settings.popups
        notifier.windowMilliseconds = settings.popupWindowMilliseconds
        let inbox = Self.inboxRoot(settings)
        notifier.appOwned = { $0.hasPrefix(inbox) }
        curl = CurlMulti(maxTotalConnections: settings.maxTotal, maxHostConnections: settings.maxPerHost)
        curl.onDone = { [unowned self] easy, code in self.transferDone(easy: easy, code: Int(code.rawValue)) }
        curl.afterAction = { [unowned self] in self.absorbTransfers() }
    }

    /// Restores state after a start (or a crash) and starts whatever may run.
    public func start() throws {
        removeLeftoversOfCompletedTasks()
        let requeued = try store.requeueInterrupted(now: MainLoop.now)
        if requeued > 0 { log.info("resuming \(requeued) transfer(s) interrupted by the last shutdown") }
        queues = try store.loadEventQueues()
        sessions = try store.allSessions()   // the scheduler reads them from memory
        badge = Int(try store.meta("badge") ?? "0") ?? 0
        notifier.onActivated = { [weak self] in self?.resetBadge() }
        onLauncherChanged()   // docks want the current state from a (re)started agent
        network.onChange = { [weak self] up in self?.networkChanged(up) }
        networkChanged(network.available)   // tasks that waited for it before a restart try again
        for (id, q) in queues { reservedSeq[id] = q.lastSeq }
        armRetryTimer()
        scheduleSoon()
        MainLoop.idle { [weak self] in self?.pruneEndedTasks() }   // after the first answers
        // Events that waited across a restart (or a reboot) may need their app. Apps still
        // running reopen their sessions when they see the new agent: give them a moment first.
        _ = MainLoop.addTimer(milliseconds: 2_000) { [weak self] in
            guard let self else { return false }
            for id in self.queues.keys { self.considerLaunch(id) }
            return false
        }
    }

    /// Retention: ended tasks older than `keepEndedMicroseconds` leave the list (their files
    /// stay). Looked at when the agent starts and when a task ends, at most once an hour: no
    /// timer of its own, so an idle agent never wakes up for it.
    func pruneEndedTasks() {
        let now = MainLoop.now, keep = settings.keepEndedMicroseconds
        guard keep > 0, now - lastPrune >= 3_600_000_000 || lastPrune == 0 else { return }
        lastPrune = now
        do {
            let old = try store.endedTaskIDs(session: nil, updatedBefore: now - keep)
            guard !old.isEmpty else { return }
            try removeTasks(old)
            log.info("removed \(old.count) task(s) that ended more than \(keep / 86_400_000_000) day(s) ago from the list")
        } catch {
            log.error("cannot prune ended tasks: \(error)")
        }
    }

    /// A crash after a completion was committed leaves its staging name (and a copy's hidden
    /// second name next to the file): the file itself is in place, these go.
    private func removeLeftoversOfCompletedTasks() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory)) ?? []
        for name in names where name.hasSuffix(".part") {
            guard let id = Int64(name.dropLast(5)), let r = try? store.task(id), r.state == .completed else { continue }
            unlink(stagingPath(id))
            if let file = r.file { unlink(Finalizer.copyName(directory: (file as NSString).deletingLastPathComponent, task: id)) }
        }
    }

    /// Stops every transfer so that it resumes on the next start; bytes on disk are kept.
    public func shutdown() {
        for (id, t) in transfers {
            curl.remove(t.easy)
            t.sync()
            if var m = machines[id] {
                // Stays "running" in the store: the next start requeues it.
                _ = m.progressed(received: t.received, now: MainLoop.now)
                try? store.update(m.record)
            }
        }
        transfers.removeAll()
        machines.removeAll()
    }

    // MARK: - Machines and actions

    /// Runs one machine event for a task (running or stored) and carries out its actions.
    @discardableResult
    func withMachine(_ id: Int64, _ body: (inout TaskMachine) throws -> [TaskMachine.Action]) throws -> TaskRecord {
        var m: TaskMachine
        if let live = machines[id] {
            m = live
        } else if let r = try store.task(id) {
            m = TaskMachine(r)
        } else {
            throw FerryError(.noSuchTask, "no task with id \(id)")
        }
        let before = m
        let actions = try body(&m)
        machines[id] = m
        guard perform(actions, id: id, before: before) else {
            throw FerryError(.storeUnavailable, "cannot record the change to task \(id): the agent's store cannot commit (is its disk full?); nothing changed")
        }
        let record = machines[id]?.record ?? m.record
        if record.state != .running || (transfers[id] == nil && !finalizing.contains(id)) { machines[id] = nil }
        // Rechecks cycle waiting → queued → running: the warning is forgotten only when the task
        // ends, is paused or waits for something else.
        if record.state.isFinal || record.state == .paused || (record.state == .waiting && record.reason != .space) {
            spaceWarned.remove(id)
        }
        if record.state.isFinal {
            credentials[id] = nil   // an app's password lives no longer than its task
            pruneEndedTasks()
        }
        return record
    }

    /// Carries out one event's actions; what they write to the store commits in one transaction.
    /// When it cannot commit, memory goes back to what the store says (`before`) and the task
    /// waits for the store (see `storeRefused`). Returns whether it committed.
    @discardableResult
    func perform(_ actions: [TaskMachine.Action], id: Int64, before: TaskMachine) -> Bool {
        let session = before.record.session
        let seqBefore = queues[session]?.lastSeq
        do {
            try store.batch { try performActions(actions, id: id) }
        } catch {
            log.error("cannot save task \(id): \(error)")
            storeRefused(id, before: before, seqBefore: seqBefore)
            return false
        }
        if actions.contains(.persist), machines[id]?.record.state == .completed { CrashPoint.reached(.completionCommitted) }
        return true
    }

    /// The store refused a task's change: undo it in memory. A transfer the change started is
    /// stopped (bytes kept); a task left without its transfer waits until the store commits
    /// again, then continues from its bytes. Its events of the change are forgotten.
    private func storeRefused(_ id: Int64, before: TaskMachine, seqBefore: UInt64?) {
        if let seqBefore { queues[before.record.session]?.rollBack(after: seqBefore) }
        if before.record.state != .running, let t = transfers.removeValue(forKey: id) {
            curl.remove(t.easy)
            t.sync()
            scheduler.stopped(host: before.record.host, session: before.record.session)
        }
        if transfers[id] != nil || finalizing.contains(id) {
            machines[id] = before
        } else {
            machines[id] = nil
            storeBlocked.insert(id)
            armStoreRecheck()
        }
    }

    /// While tasks wait for the store, look again every `--space-recheck`; none, no timer.
    private func armStoreRecheck() {
        guard storeRecheckTimer == 0 else { return }
        storeRecheckTimer = MainLoop.addTimer(milliseconds: UInt32(clamping: settings.spaceRecheckMilliseconds)) { [weak self] in
            guard let self else { return false }
            do {
                try self.store.batch { for id in self.storeBlocked { try self.store.requeueIfRunning(id, now: MainLoop.now) } }
            } catch {
                return true   // still refused: keep looking
            }
            self.log.info("the store commits again: \(self.storeBlocked.count) task(s) continue")
            self.storeBlocked.removeAll()
            self.storeRecheckTimer = 0
            self.scheduleSoon()
            return false
        }
    }

    private func performActions(_ actions: [TaskMachine.Action], id: Int64) throws {
        for action in actions {
            guard let m = machines[id] else { return }
            switch action {
            case .startTransfer(let plan):
                startTransfer(m.record, plan: plan)
            case .stopTransfer:
                if let t = transfers.removeValue(forKey: id) {
                    curl.remove(t.easy)
                    t.sync()
                    scheduler.stopped(host: m.record.host, session: m.record.session)
                    launcherProgressChanged()
                    scheduleSoon()
                }
            case .discardPartial:
                discardBytes(id)
            case .quarantine:
                rename(stagingPath(id), quarantinePath(id))
            case .warnNoSpace:
                if spaceWarned.insert(id).inserted, sessionConfig(m.record.session).popups {
                    notifier.post(.noSpace(name: displayName(m.record)))
                }
            case .finalize:
                finalize(id)
            case .scheduleRetry:
                armRetryTimer()
            case .emit(let event):
                tellUser(event, record: m.record)
                if event.isProgress { launcherProgressChanged() }
                try emit(session: m.record.session, task: id, event)
            case .persist:
                try store.update(m.record)   // a failure fails the whole batch (see perform)
                onTaskChanged(id, m.record.state)
            }
        }
    }

    private func startTransfer(_ r: TaskRecord, plan: TaskMachine.TransferPlan) {
        do {
            // The session's request timeout is an idle limit: curl's low-speed time.
            var transferSettings = settings.transfer
            let idle = sessionConfig(r.session).requestTimeout
            if idle > 0 { transferSettings.stallSeconds = min(transferSettings.stallSeconds, idle) }
            let t = try Transfer(taskID: r.id, record: r, plan: plan, stagingPath: stagingPath(r.id),
                                 credential: credentials[r.id], settings: transferSettings)
            transfers[r.id] = t
            scheduler.started(host: r.host, session: r.session)
            launcherProgressChanged()
            curl.add(t.easy)
            CrashPoint.reached(.transferStarted)
            log.debug("task \(r.id): starting at byte \(plan.offset)")
        } catch {
            // CURLE_WRITE_ERROR with the errno: ENOSPC waits for space, the rest fails clearly.
            let outcome: TransferOutcome
            if let e = error as? TransferStartFailure {
                outcome = .localFailure(errno: e.errno, message: e.message)
            } else {
                outcome = .localFailure(errno: EACCES, message: "\(error)")
            }
            var m = machines[r.id]!
            let before = m
            let actions = m.transferEnded(outcome,
                                          backoff: settings.backoff, resourceDeadline: deadline(r), now: MainLoop.now,
                                          random: Double.random(in: 0..<1), spaceRecheck: spaceRecheck)
            machines[r.id] = m
            perform(actions, id: r.id, before: before)
        }
    }

    var spaceRecheck: Int64 { settings.spaceRecheckMilliseconds * 1_000 }

    func displayName(_ r: TaskRecord) -> String {
        if let output = r.output { return (output as NSString).lastPathComponent }
        return FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: DownloadURL.printable(r.url))
    }

    private func transferDone(easy: UnsafeMutableRawPointer, code: Int) {
        guard let t = Transfer.from(easy: easy) else { return }
        CrashPoint.reached(.transferEnded)
        curl.remove(easy)
        let id = t.taskID
        guard transfers.removeValue(forKey: id) != nil, let r = machines[id]?.record else { return }
        scheduler.stopped(host: r.host, session: r.session)
        launcherProgressChanged()
        if code == 0 && !t.began && !t.isUpload { _ = t.begin() }   // an empty body never reached the write callback
        absorb(t)
        var outcome = TransferOutcome(curlCode: code, curlMessage: t.errorMessage,
                                      httpStatus: t.httpStatus, retryAfterSeconds: t.retryAfterSeconds,
                                      localErrno: t.writeErrno, localMessage: t.localMessage, bytesThisAttempt: t.bytesThisAttempt,
                                      authenticate: t.httpStatus == 401 ? t.header("WWW-Authenticate") : nil)
        outcome.rejection = t.rejection
        if code != 0 { log.info("task \(id): attempt ended: curl \(code) HTTP \(outcome.httpStatus) \(t.rejection ?? outcome.curlMessage)") }
        _ = try? withMachine(id) { m in
            _ = m.progressed(received: t.received, now: MainLoop.now)
            return m.transferEnded(outcome, backoff: settings.backoff, resourceDeadline: deadline(m.record),
                                   now: MainLoop.now, random: Double.random(in: 0..<1),
                                   networkAvailable: network.available || DownloadURL.isLoopback(host: m.record.host),
                                   canChallenge: sessionConfig(m.record.session).keepEvents,
                                   spaceRecheck: spaceRecheck)
        }
        scheduleSoon()
    }

    private func deadline(_ r: TaskRecord) -> Int64? {
        let seconds = sessions[r.session]?.resourceTimeout ?? SessionConfig().resourceTimeout
        return r.created + Int64(seconds) * 1_000_000
    }

    /// Verifies and moves a finished file on the worker thread; the result comes back to the loop.
    private func finalize(_ id: Int64) {
        guard let m = machines[id], finalizing.insert(id).inserted else { return }
        let record = m.record, staging = stagingPath(id)
        let defaultDir = settings.downloadDirectory ?? sessionConfig(record.session).defaultDirectory ?? Paths.downloadDirectory()
        fileWorker.async {
            let result = Result { try Finalizer.finish(staging: staging, record: record, defaultDirectory: defaultDir) }
            MainLoop.idle { [weak self] in self?.finalized(id, result) }
        }
    }

    private func finalized(_ id: Int64, _ result: Result<Finalizer.Saved, Error>) {
        finalizing.remove(id)
        guard var m = machines[id] else { return }
        let before = m
        let now = MainLoop.now
        let actions: [TaskMachine.Action]
        var cleanup: [String] = []
        switch result {
        case .success(let saved):
            log.info("task \(id): complete: \(saved.path)")
            actions = m.finalized(file: saved.path, now: now)
            cleanup = saved.cleanup
        case .failure(let f as Finalizer.Failure) where f.name == "NoSpace":
            log.warning("task \(id): waiting for space: \(f.message)")
            actions = m.finalizeNeedsSpace(message: f.message, recheck: spaceRecheck, now: now)
        case .failure(let f as Finalizer.Failure) where f.name == "ChecksumMismatch":
            let message = f.message + "; the bytes are kept apart in \(quarantinePath(id)) (never delivered)"
            log.warning("task \(id): failed: \(message)")
            actions = m.checksumMismatched(message: message, now: now)
        case .failure(let f as Finalizer.Failure):
            log.warning("task \(id): failed: \(f.message)")
            actions = m.finalizeFailed(name: f.name, message: f.message, now: now)
        case .failure(let error):
            actions = m.finalizeFailed(name: "Failed", message: "\(error)", now: now)
        }
        machines[id] = m
        perform(actions, id: id, before: before)
        // Committed: the staging name (and a copy's hidden second name) are no longer needed.
        if machines[id]?.record.state == .completed { for path in cleanup { unlink(path) } }
        if machines[id]?.record.state != .running { machines[id] = nil }
        scheduleSoon()
    }

    // MARK: - Telling the user

    private func tellUser(_ event: SessionEvent, record r: TaskRecord) {
        guard sessionConfig(r.session).popups else { return }
        switch event {
        case .finished(let file, _):
            notifier.post(.completed(file: file))
            setBadge(badge + 1)
        case .completed(let error?, let name, _) where name != "Canceled":
            notifier.post(.failed(name: displayName(r), reason: error))
        default:
            break
        }
    }

    func resetBadge() { if badge != 0 { setBadge(0) } }

    private func setBadge(_ value: Int) {
        badge = value
        do { try store.setMeta("badge", String(value)) } catch { log.error("cannot save the badge: \(error)") }
        onLauncherChanged()
    }

    /// What docks show: the badge, and the progress (0...1) of all running transfers.
    var launcherState: (count: Int, progress: Double, transferring: Bool) {
        var received: Int64 = 0, expected: Int64 = 0
        for m in machines.values where m.record.state == .running {
            if let e = m.record.expected, e > 0 { received += m.record.received; expected += e }
        }
        return (badge, expected > 0 ? min(1, Double(received) / Double(expected)) : 0, !transfers.isEmpty)
    }

    /// Progress reaches docks at most twice a second, and only while something transfers.
    func launcherProgressChanged() {
        guard launcherTimer == 0 else { return }
        launcherTimer = MainLoop.addTimer(milliseconds: 500) { [weak self] in
            self?.launcherTimer = 0
            self?.onLauncherChanged()
            return false
        }
    }

    // MARK: - Scheduling

    func scheduleSoon() {
        guard !scheduleQueued else { return }
        scheduleQueued = true
        MainLoop.idle { [weak self] in self?.schedule() }
    }

    /// Any change (a route, an interface, a LAN) may make a waiting task's server reachable:
    /// they all try again at once, from their partial bytes. When the network comes or goes,
    /// running transfers restart too, on new connections (the old ones may lead nowhere).
    private func networkChanged(_ up: Bool) {
        log.info(up ? "network available" : "network changed; no default route")
        defer { networkWasAvailable = up }
        if let before = networkWasAvailable, before != up {
            for id in Array(transfers.keys) {
                _ = try? withMachine(id) { $0.networkChanged(now: MainLoop.now) }
            }
            if transfers.isEmpty { curl.dropConnections() }
        }
        for r in (try? store.waitingForNetwork()) ?? [] {
            _ = try? withMachine(r.id) { $0.networkReturned(now: MainLoop.now) }
        }
        scheduleSoon()
    }

    private func schedule() {
        scheduleQueued = false
        // No gate on the network monitor: "no default route" is not "unreachable" (a LAN, a
        // lab network, loopback). Attempts that cannot reach their server wait for the network.
        guard scheduler.freeSlots > 0 else { return }
        var plan = scheduler
        let next: [TaskRecord]
        do {
            let metered = network.metered, powerSaver = network.powerSaver
            next = try store.nextQueued(limit: scheduler.freeSlots, excludingHosts: scheduler.fullHosts,
                                        excludingIDs: Set(transfers.keys).union(storeBlocked)) { r in
                guard plan.mayStart(host: r.host) else { return .skipHost }
                // No store access in here: this runs inside the store's read transaction.
                let c = sessions[r.session] ?? SessionConfig()
                let policy = SessionPolicy(allowMetered: c.allowMetered, discretionary: c.discretionary, perHostLimit: c.perHostLimit)
                guard policy.mayStart(metered: metered, powerSaver: powerSaver,
                                      runningForHost: plan.running(session: r.session, host: r.host)) else { return .skipTask }
                plan.started(host: r.host, session: r.session)
                return .take
            }
        } catch {
            log.error("cannot read the queue: \(error)")
            return
        }
        for r in next {
            let partial = r.kind == .upload ? 0 : fileSize(stagingPath(r.id))
            _ = try? withMachine(r.id) { $0.start(partialBytes: partial, now: MainLoop.now) }
        }
    }

    func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : 0
    }

    /// One timer for the earliest retry of all waiting tasks (none when nothing waits).
    func armRetryTimer() {
        MainLoop.cancel(retryTimer)
        retryTimer = 0
        guard let at = try? store.earliestRetry() else { return }
        let delayMs = max(0, (at - MainLoop.now + 999) / 1_000)
        retryTimer = MainLoop.addTimer(milliseconds: UInt32(min(delayMs, Int64(UInt32.max)))) { [weak self] in
            self?.retryTimerFired()
            return false
        }
    }

    private func retryTimerFired() {
        retryTimer = 0
        let now = MainLoop.now
        for r in (try? store.dueRetries(now: now)) ?? [] {
            _ = try? withMachine(r.id) { $0.retryDue(now: now) }
        }
        armRetryTimer()
        scheduleSoon()
    }

    // MARK: - Events

    func sessionConfig(_ id: String) -> SessionConfig {
        if let c = sessions[id] { return c }
        let c = (try? store.session(id)) ?? nil
        sessions[id] = c ?? SessionConfig()
        return sessions[id]!
    }

    /// Queues an event for the session's client and stores it (inside the caller's batch: a
    /// store failure undoes the whole change, see `perform`).
    func emit(session: String, task: Int64, _ event: SessionEvent) throws {
        guard sessionConfig(session).keepEvents else { return }
        // Appended in place: copying the queue out and back would copy it whole for every event.
        let e = queues[session, default: EventQueue()].append(task: task, event)
        if event.isDurable { try store.appendEvent(session: session, e) }
        // Progress is not stored, but its numbers must never be reused after a restart:
        // reserve them in blocks so a restarted agent continues above anything a client saw.
        if e.seq > reservedSeq[session] ?? 0 {
            let reserve = e.seq + 1_000
            try store.setLastSeq(session: session, reserve)
            reservedSeq[session] = reserve
        }
        if signalsPending.isEmpty {
            MainLoop.idle { [weak self] in self?.flushSignals() }
        }
        signalsPending.insert(session)
    }

    private func flushSignals() {
        for s in signalsPending {
            onEventsAvailable(s, queues[s]?.lastSeq ?? 0)
            CrashPoint.reached(.eventEmitted)
            considerLaunch(s)
            checkInvalidation(s)
        }
        signalsPending.removeAll()
    }
}

extension Agent {
    /// What the running transfers did during one round of curl's work, read after curl
    /// returned: their bytes go to disk, new response headers and progress to the task machines.
    func absorbTransfers() {
        for t in transfers.values { absorb(t) }
    }

    func absorb(_ t: Transfer) {
        t.flush()
        guard var m = machines[t.taskID] else { return }
        if let head = t.takeHead() {
            let before = m
            let (_, actions) = m.responseBegan(status: head.status, contentRangeStart: head.contentRangeStart,
                                               totalLength: head.totalLength, etag: head.etag, lastModified: head.lastModified,
                                               suggestedName: head.contentDisposition.flatMap(FileNaming.contentDispositionName))
            machines[t.taskID] = m
            guard perform(actions, id: t.taskID, before: before) else { return }
            CrashPoint.reached(.responseBegan)
            guard let next = machines[t.taskID] else { return }
            m = next
        }
        guard t.received != m.record.received else { return }
        let before = m
        let actions = m.progressed(received: t.received, now: MainLoop.now)
        machines[t.taskID] = m
        if !actions.isEmpty { perform(actions, id: t.taskID, before: before) }
    }
}
