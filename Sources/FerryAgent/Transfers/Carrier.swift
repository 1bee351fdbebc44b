import CCurl
import CFerryShim
import FerryCore
import Glibc

/// One transfer thread: a curl multi handle and the transfers it runs, on a GLib context of its
/// own. It carries out and measures, and decides nothing: the loop hands it commands in
/// batches (`CarrierCommand`), and it reports what curl did as the core's inputs, in batches,
/// after curl returned (`CarrierReport`); a response's body waits for the core's decision, as
/// it did when curl ran on the loop. Everything here is this thread's alone.
final class Carrier {
    private let thread: ThreadLoop
    private let settings: TransferSettings
    private var limits: (total: Int, host: Int)
    private var multiHandle: CurlMulti?
    private var running: [Int64: Transfer] = [:]
    /// Transfers curl moved bytes for during the current round.
    private var touched: [Transfer] = []
    private let waits: SpeedLimitWaits
    /// Speed limits given to transfers not made yet (applied once they run).
    private var pendingLimits: [Int64: Int64] = [:]
    /// Transfers whose empty body ended before the core decided on it.
    private var endedUndecided: [Int64: (Transfer, Int)] = [:]
    private let cookies: CookieJars
    /// Reports of the current dispatch, posted to the loop together at its end.
    private var outgoing: [CarrierReport] = []
    /// Bytes-so-far reports held back: the loop hears them at most every `progressEvery` (from
    /// a fast server curl's rounds come every few hundred µs, each would wake the loop, and the
    /// core reads progress ten times a second). Any other report of a task goes with its own;
    /// the attempt's end, which says how many bytes it has, replaces it.
    private var heldProgress: [Int64: CarrierReport] = [:]
    private static let progressEvery: Int64 = 25_000  // µs
    private var lastSent: Int64 = 0
    private var progressTimer: UInt32 = 0
    private let reports: Mailbox<CarrierReport>
    /// Commands from the loop (posted there, handled here).
    private(set) lazy var inbox = Mailbox<CarrierCommand>(context: thread.context) { [unowned self] in handle($0) }

    init(
        named name: String, settings: TransferSettings, stateDirectory: String, limits: (total: Int, host: Int),
        reports: Mailbox<CarrierReport>
    ) {
        thread = ThreadLoop(named: name)
        self.settings = settings
        self.limits = limits
        self.reports = reports
        cookies = CookieJars(folder: StateFolder(stateDirectory).cookieJars)
        waits = SpeedLimitWaits(context: thread.context)
        waits.resume = { [unowned self] t in resumeLimited(t) }
    }

    private var multi: CurlMulti {
        if let multiHandle { return multiHandle }
        let made = CurlMulti(
            context: thread.context, maxTotalConnections: limits.total, maxHostConnections: limits.host)
        made.around = { [unowned self] work in
            work()
            sendReports()
        }
        made.afterAction = { [unowned self] in
            let moved = touched
            touched = []
            for t in moved where running[t.taskID] === t {
                t.pace.touched = false
                absorb(t)
                if !t.pace.yielded { t.pace.roundBytes = 0 }  // a new round, a new share
            }
            for t in moved where t.pace.bucket.paused && running[t.taskID] === t { waits.paused(t) }
            let yielded = moved.filter { $0.pace.yielded && running[$0.taskID] === $0 }
            if !yielded.isEmpty { resumeNextRound(yielded) }
        }
        made.onDone = { [unowned self] easy, code in done(easy: easy, code: Int(code.rawValue)) }
        multiHandle = made
        return made
    }

    // MARK: - Commands

    private func handle(_ batch: [CarrierCommand]) {
        for command in batch {
            switch command {
            case .make(let r, let plan, let start):
                switch TransferStarter.make(
                    r, plan, staging: start.staging, credential: start.credential, proxy: start.proxy,
                    settings: settings)
                {
                case .success(let t): run(t, start)
                case .failure(let e):
                    pendingLimits[r.id] = nil
                    report(r.id, start.attempt, .transferCouldNotStart(task: r.id, e.outcome))
                }
            case .run(let t, let start): run(t, start)
            case .continueBody(let id, let attempt, let decision): continueBody(id, attempt, decision)
            case .limitSpeed(let id, let rate):
                guard let t = running[id] else { pendingLimits[id] = rate; continue }
                t.limitSpeed(to: rate)
                if t.pace.bucket.paused { waits.paused(t) }  // its wait, at the new rate
            case .stop(let id): _ = stop(id)
            case .setLimits(let total, let host):
                limits = (total, host)
                multiHandle?.setLimits(total: total, host: host)
            case .dropConnections:
                if running.isEmpty && endedUndecided.isEmpty { multiHandle?.dropConnections() }
            case .forgetCookies(let jar): cookies.forget(jar)
            case .stopAll(let answer):
                var out: [Int64: Int64] = [:]
                for id in Array(running.keys) + Array(endedUndecided.keys) { out[id] = stop(id) }
                answer.give(out)
            }
        }
        multiHandle?.kick()  // what was added or unpaused starts in this dispatch
        sendReports()
    }

    private func run(_ t: Transfer, _ start: TransferStart) {
        cookies.attach(start.jar, t.easy)
        t.attempt = start.attempt
        t.onTouched = { [unowned self] in touched.append($0) }
        running[t.taskID] = t
        if let rate = pendingLimits.removeValue(forKey: t.taskID) { t.limitSpeed(to: rate) }
        multi.add(t.easy)
        CrashPoint.reached(.transferStarted)
    }

    /// The core's decision on a response's body: the paused transfer carries it out and goes
    /// on; one whose (empty) body ended meanwhile ends now.
    private func continueBody(_ id: Int64, _ attempt: UInt64, _ decision: TaskMachine.BodyDecision) {
        if let t = running[id], t.attempt == attempt, t.awaitingDecision {
            t.apply(decision)
            multi.resume(t.easy)
        } else if let (t, code) = endedUndecided[id], t.attempt == attempt {
            endedUndecided[id] = nil
            t.apply(decision)
            ended(t, code: code)
        }
    }

    /// Detaches a transfer, its bytes synced to disk; returns how many.
    private func stop(_ id: Int64) -> Int64? {
        pendingLimits[id] = nil
        if let (t, _) = endedUndecided.removeValue(forKey: id) { return t.received }
        guard let t = running.removeValue(forKey: id) else { return nil }
        multi.remove(t.easy)
        t.sync()
        return t.received
    }

    // MARK: - Pace

    /// Transfers that used their share of a round go on after the other sockets ready
    /// meanwhile (a zero timer on this thread).
    private func resumeNextRound(_ yielded: [Transfer]) {
        _ = ContextSource.timer(in: thread.context, milliseconds: 0) { [weak self] in
            guard let self else { return false }
            var again: [Transfer] = []
            for t in yielded where running[t.taskID] === t && t.pace.yielded {
                t.pace.yielded = false
                t.pace.roundBytes = 0
                multi.resume(t.easy)  // curl hands over what it held, within this call
                t.pace.roundBytes = 0
                if t.pace.yielded { again.append(t) }
            }
            if !again.isEmpty { resumeNextRound(again) }
            multi.kick()
            sendReports()
            return false
        }
    }

    /// A transfer paused for its speed limit has credit again (one waiting for the core stays).
    private func resumeLimited(_ t: Transfer) {
        guard running[t.taskID] === t, !t.awaitingDecision else { return }
        t.pace.bucket.paused = false
        multi.resume(t.easy)
        if t.pace.bucket.paused { waits.paused(t) }
        multi.kick()
        sendReports()
    }

    // MARK: - Reports

    private func report(_ task: Int64, _ attempt: UInt64, _ input: AgentInput) {
        let r = CarrierReport(task: task, attempt: attempt, input: input)
        if case .progressed = input {
            heldProgress[task] = r
            return
        }
        // The end carries the bytes so far itself.
        if let held = heldProgress.removeValue(forKey: task), !input.isTransferEnd { outgoing.append(held) }
        outgoing.append(r)
    }

    /// Posts the dispatch's reports, with the progress held back when anything else goes or
    /// its time came; else arms the timer that sends the progress.
    private func sendReports() {
        let now = Transfer.now
        if !heldProgress.isEmpty && (!outgoing.isEmpty || now - lastSent >= Self.progressEvery) {
            outgoing.append(contentsOf: heldProgress.values)
            heldProgress = [:]
        }
        if !outgoing.isEmpty {
            reports.post(contentsOf: outgoing)
            outgoing = []
            lastSent = now
        }
        guard !heldProgress.isEmpty, progressTimer == 0 else { return }
        let wait = UInt32(max(1, (lastSent + Self.progressEvery - now + 999) / 1_000))
        progressTimer = ContextSource.timer(in: thread.context, milliseconds: wait) { [weak self] in
            self?.progressTimer = 0
            self?.sendReports()
            return false
        }
    }

    /// New response headers and bytes of one transfer, after curl returned.
    private func absorb(_ t: Transfer) {
        t.flush()
        let (id, attempt) = (t.taskID, t.attempt)
        if let head = t.takeHead() { report(id, attempt, .responseBegan(task: id, head)) }
        if let location = t.takeAnnouncedResource() {
            report(id, attempt, .uploadResourceAnnounced(task: id, location: location))
        }
        report(id, attempt, .progressed(task: id, received: t.received))
        if let space = t.takeMeasuredSpace() {
            report(id, attempt, .stagingSpace(task: id, received: t.received, space))
        }
    }

    private func done(easy: UnsafeMutableRawPointer, code: Int) {
        guard let t = Transfer.from(easy: easy) else { return }
        CrashPoint.reached(.transferEnded)
        multi.remove(easy)
        guard running.removeValue(forKey: t.taskID) != nil else { return }
        if code == 0 && !t.began && !t.isUpload {
            // An empty body never reached the write callback: its head goes to the core too,
            // and the attempt ends once the core has decided (`continueBody`), or now where it
            // gave leave to go ahead.
            t.headArrived()
            if !t.began {
                endedUndecided[t.taskID] = (t, code)
                absorb(t)
                return
            }
        }
        absorb(t)
        ended(t, code: code)
    }

    private func ended(_ t: Transfer, code: Int) {
        report(t.taskID, t.attempt, .transferEnded(task: t.taskID, received: t.received, t.outcome(code: code)))
    }
}

private extension AgentInput {
    var isTransferEnd: Bool { if case .transferEnded = self { true } else { false } }
}
