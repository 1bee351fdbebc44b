import CCurl
import FerryCore
import Glibc

/// The running transfers and the curl multi handle they share. Turns what curl did into agent
/// inputs, read after curl returned: nothing is decided or stored inside a curl callback.
final class Transfers {
    let curl: CurlMulti
    private let settings: TransferSettings
    private let stateDirectory: String
    private(set) var running: [Int64: Transfer] = [:]
    /// Hands an input to the agent (inside the turn of the curl round that produced it).
    var feed: (AgentInput) -> Void = { _ in }

    init(settings: AgentSettings) {
        self.settings = settings.transfer
        stateDirectory = settings.stateDirectory
        curl = CurlMulti(maxTotalConnections: settings.maxTotal, maxHostConnections: settings.maxPerHost)
        curl.afterAction = { [unowned self] in for t in running.values { absorb(t) } }
        curl.onDone = { [unowned self] easy, code in done(easy: easy, code: Int(code.rawValue)) }
    }

    /// Starts an attempt; when it cannot even begin, says how that ended instead.
    func start(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan, stallSeconds: Int, credential: Credential?) -> TransferOutcome? {
        var s = settings
        s.stallSeconds = stallSeconds
        do {
            let t = try Transfer(taskID: r.id, record: r, plan: plan, stagingPath: Paths.staging(stateDirectory, task: r.id),
                                 credential: credential, settings: s)
            running[r.id] = t
            curl.add(t.easy)
            CrashPoint.reached(.transferStarted)
            return nil
        } catch let e as TransferStartFailure {
            return .localFailure(errno: e.errno, message: e.message)   // ENOSPC waits for space
        } catch {
            return .localFailure(errno: EACCES, message: "\(error)")
        }
    }

    /// Detaches a transfer; its bytes are on disk. Returns how many.
    @discardableResult
    func stop(_ id: Int64) -> Int64? {
        guard let t = running.removeValue(forKey: id) else { return nil }
        curl.remove(t.easy)
        t.sync()
        return t.received
    }

    /// Closes every cached connection (the network they ran over changed); only when idle.
    func dropConnections() { if running.isEmpty { curl.dropConnections() } }

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
        feed(.progressed(task: t.taskID, received: t.received))
    }

    private func done(easy: UnsafeMutableRawPointer, code: Int) {
        guard let t = Transfer.from(easy: easy) else { return }
        CrashPoint.reached(.transferEnded)
        curl.remove(easy)
        guard running.removeValue(forKey: t.taskID) != nil else { return }
        if code == 0 && !t.began && !t.isUpload { _ = t.begin() }   // an empty body never reached the write callback
        absorb(t)
        var outcome = TransferOutcome(curlCode: code, curlMessage: t.errorMessage,
                                      httpStatus: t.httpStatus, retryAfterSeconds: t.retryAfterSeconds,
                                      localErrno: t.writeErrno, localMessage: t.localMessage, bytesThisAttempt: t.bytesThisAttempt,
                                      authenticate: t.httpStatus == 401 ? t.header("WWW-Authenticate") : nil)
        outcome.rejection = t.rejection
        feed(.transferEnded(task: t.taskID, received: t.received, outcome))
    }
}
