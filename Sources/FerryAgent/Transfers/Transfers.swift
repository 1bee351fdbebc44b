import CCurl
import CFerryShim
import FerryCore
import FoundationEssentials
import Glibc

/// The running transfers and the curl multi handle they share. Turns what curl did into agent
/// inputs, read after curl returned: nothing is decided or stored inside a curl callback.
final class Transfers {
    /// Made for the first transfer: libcurl's global set-up (OpenSSL's, mostly) takes 2.4 MiB
    /// of memory, which an agent that has transferred nothing yet does without.
    private var multi: CurlMulti?
    private var limits: (total: Int, host: Int)
    /// Wraps each round of curl's work (the agent makes it one turn).
    var around: (() -> Void) -> Void = { $0() } { didSet { multi?.around = around } }
    private let settings: TransferSettings
    private(set) var running: [Int64: Transfer] = [:]
    /// Transfers curl moved bytes for during the current round.
    private var touched: [Transfer] = []
    /// Makes each task's transfer (its proxy, its staging file) and hands it back to the loop.
    private let starter: TransferStarter
    /// Hands an input to the agent (inside the turn of the curl round that produced it).
    var feed: (AgentInput) -> Void = { _ in }

    /// Transfers paused by their speed limit, till they have credit again.
    private let waits = SpeedLimitWaits()
    /// Speed limits the core gave transfers still being made (applied once they run).
    private var pendingLimits: [Int64: Int64] = [:]
    private let cookies: CookieJars

    init(settings: AgentSettings) {
        self.settings = settings.transfer
        cookies = CookieJars(folder: StateFolder(settings.stateDirectory).cookieJars)
        starter = TransferStarter(settings: settings.transfer, stateDirectory: settings.stateDirectory)
        limits = (settings.core.maxTotal, settings.core.maxPerHost)
        waits.resume = { [unowned self] t in resumeLimited(t) }
        starter.onMade = { [unowned self] id, made in self.made(id, made) }
        starter.afterBatch = { [unowned self] in multi?.kick() }
    }

    /// The desktop's proxy answers go with the network they were given on (once any was asked).
    func networkChanged() { if multi != nil { starter.networkChanged() } }

    /// The user changed how many transfers may run (the settings).
    func setLimits(total: Int, host: Int) {
        limits = (total, host)
        multi?.setLimits(total: total, host: host)
    }

    /// The core shared the speed limits out (`SpeedLimits`): each transfer's, bytes per second.
    func limitSpeeds(_ allowances: [Int64: Int64]) {
        for (id, rate) in allowances {
            guard let t = running[id] else {
                pendingLimits[id] = rate  // still being made
                continue
            }
            t.limitSpeed(to: rate)
            if t.pace.bucket.paused { waits.paused(t) }  // its wait, at the new rate
        }
    }

    /// Transfers whose empty body ended before the core decided on it (see `done`).
    private var endedUndecided: [Int64: (Transfer, Int)] = [:]

    private var curl: CurlMulti {
        if let multi { return multi }
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))  // here on the loop, before any thread makes a handle
        // A transfer's buffers (curl's and the staging file's, up to 512 kB each) are allocated
        // at its start and freed at its end. glibc would map each from the kernel, or give the
        // heap's top back and grow it again, so every small file touched fresh pages (3 page
        // faults a file of 16 kB): buffers up to 1 MiB come from the heap, 16 MiB freed stays.
        ferry_keep_freed_memory(1 << 20, 16 << 20)
        let made = CurlMulti(maxTotalConnections: limits.total, maxHostConnections: limits.host)
        made.around = around
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
            if !yielded.isEmpty { resumeNextTurn(yielded) }
        }
        made.onDone = { [unowned self] easy, code in done(easy: easy, code: Int(code.rawValue)) }
        multi = made
        return made
    }

    /// Starts an attempt. A new download whose staging file is on a local disk and needs no
    /// preallocation is prepared here on the loop (creating the file costs about what a store
    /// write does, and a worker's round trip would add 0.15 ms to every small file's start);
    /// the rest (an upload's file, which may be anywhere; a resume's truncation; a large
    /// preallocation; a staging folder on a network file system) on a worker thread, and curl
    /// gets it on the loop. One that cannot even begin comes back as `transferCouldNotStart`
    /// (ENOSPC waits for space, the rest fails clearly), always in a turn of its own.
    /// The proxy comes first: GIO's resolver answers on the loop (at once when there is no
    /// desktop resolver, and curl reads the environment).
    func start(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan, credential: Credential?) {
        _ = curl  // libcurl is set up on the loop, before a worker makes a handle
        cookies.starting(r.id, jar: plan.cookieJar)
        starter.start(r, plan, credential: credential)
    }

    private func made(_ id: Int64, _ made: TransferStarter.Made) {
        switch made {
        case .ready(let t):
            cookies.attach(id, t.easy)
            t.onTouched = { [unowned self] in touched.append($0) }
            running[id] = t
            if let rate = pendingLimits.removeValue(forKey: id) { t.limitSpeed(to: rate) }
            curl.add(t.easy)
            CrashPoint.reached(.transferStarted)
        case .failed(let outcome):
            cookies.dropped(id)
            pendingLimits[id] = nil
            feed(.transferCouldNotStart(task: id, outcome))
        }
    }

    /// An invalidated session's cookies: a new session of that name starts without them.
    func forgetCookies(_ jar: String) { cookies.forget(jar) }

    /// Transfers that used their share of a round go on in the loop's next iteration, after
    /// the D-Bus calls and other sources ready meanwhile (a zero timer at their priority).
    private func resumeNextTurn(_ yielded: [Transfer]) {
        _ = MainLoop.addTimer(milliseconds: 0) { [weak self] in
            guard let self else { return false }
            self.around {
                var again: [Transfer] = []
                for t in yielded where self.running[t.taskID] === t && t.pace.yielded {
                    t.pace.yielded = false
                    t.pace.roundBytes = 0
                    self.curl.resume(t.easy)  // curl hands over what it held, within this call
                    t.pace.roundBytes = 0
                    if t.pace.yielded { again.append(t) }
                }
                if !again.isEmpty { self.resumeNextTurn(again) }
            }
            return false
        }
    }

    /// A transfer paused for its speed limit has credit again (one waiting for the core stays).
    private func resumeLimited(_ t: Transfer) {
        guard running[t.taskID] === t, !t.awaitingDecision else { return }
        around {
            t.pace.bucket.paused = false
            curl.resume(t.easy)
        }
        if t.pace.bucket.paused { waits.paused(t) }
    }

    /// The core's decision on a response's body: the paused transfer carries it out and goes
    /// on; one whose (empty) body ended meanwhile ends now.
    func continueBody(_ id: Int64, _ decision: TaskMachine.BodyDecision) {
        if let t = running[id], t.awaitingDecision {
            t.apply(decision)
            curl.resume(t.easy)
        } else if let (t, code) = endedUndecided.removeValue(forKey: id) {
            t.apply(decision)
            ended(t, code: code)
        }
    }

    /// Detaches a transfer; its bytes are on disk. Returns how many.
    @discardableResult
    func stop(_ id: Int64) -> Int64? {
        pendingLimits[id] = nil
        if starter.stop(id) { cookies.dropped(id); return nil }
        if let (t, _) = endedUndecided.removeValue(forKey: id) { return t.received }
        guard let t = running.removeValue(forKey: id) else { return nil }
        multi?.remove(t.easy)
        t.sync()
        return t.received
    }

    /// Closes every cached connection (the network they ran over changed); only when idle.
    func dropConnections() { if running.isEmpty { multi?.dropConnections() } }

    /// Detaches every transfer (the agent stops): the bytes each has on disk.
    func stopAll() -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        for id in Array(running.keys) { out[id] = stop(id) }
        return out
    }

    /// New response headers and bytes of one transfer, after curl returned.
    private func absorb(_ t: Transfer) {
        t.flush()
        if let head = t.takeHead() { feed(.responseBegan(task: t.taskID, head)) }
        if let location = t.takeAnnouncedResource() {
            feed(.uploadResourceAnnounced(task: t.taskID, location: location))
        }
        feed(.progressed(task: t.taskID, received: t.received))
        if let space = t.takeMeasuredSpace() { feed(.stagingSpace(task: t.taskID, received: t.received, space)) }
    }

    private func done(easy: UnsafeMutableRawPointer, code: Int) {
        guard let t = Transfer.from(easy: easy) else { return }
        CrashPoint.reached(.transferEnded)
        multi?.remove(easy)
        guard running.removeValue(forKey: t.taskID) != nil else { return }
        if code == 0 && !t.began && !t.isUpload {
            // An empty body never reached the write callback: its head goes to the core too,
            // and the attempt ends once the core has decided (`continueBody`).
            t.headArrived()
            endedUndecided[t.taskID] = (t, code)
            absorb(t)
            return
        }
        absorb(t)
        ended(t, code: code)
    }

    private func ended(_ t: Transfer, code: Int) {
        feed(.transferEnded(task: t.taskID, received: t.received, t.outcome(code: code)))
    }
}
