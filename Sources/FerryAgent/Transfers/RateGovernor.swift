import CCurl
import CFerryShim
import CGLib
import FerryCore

/// Keeps the running transfers under the user's download and upload limits: every second
/// (only while a limit applies and something runs under it) it measures what each moved,
/// shares the limit out (`RateShare`) and hands each transfer its allowance as curl's speed
/// limit. Also when a transfer starts or ends, so a new one does not wait a second for its share.
final class RateGovernor {
    private var download = RateShare(limit: 0), upload = RateShare(limit: 0)
    /// Bytes each transfer had moved at the last look, and when that was (µs, monotonic).
    private var moved: [Int64: Int64] = [:]
    private var lookedAt: Int64 = 0
    private var timer: UInt32 = 0
    private let transfers: () -> [Transfer]
    private let caps: () -> [Int64: Int64]
    /// Goes on with a transfer paused for its limit (Transfers: curl unpaused in a turn).
    var resume: (Transfer) -> Void = { _ in }
    /// Transfers paused for their limit, and the timer that lets each go on.
    private var waits: [Int64: UInt32] = [:]

    init(download: Int64, upload: Int64, transfers: @escaping () -> [Transfer], caps: @escaping () -> [Int64: Int64]) {
        self.download.limit = download
        self.upload.limit = upload
        self.transfers = transfers
        self.caps = caps
    }

    /// The user changed a limit: applied at once.
    func setLimits(download: Int64, upload: Int64) {
        guard download != self.download.limit || upload != self.upload.limit else { return }
        self.download.limit = download
        self.upload.limit = upload
        rebalance(measure: false)
    }

    /// A transfer spent its credit and paused: it goes on once it has some again.
    func paused(_ t: Transfer) {
        if let old = waits.removeValue(forKey: t.taskID) { g_source_remove(old) }
        waits[t.taskID] = MainLoop.addTimer(milliseconds: t.pace.bucket.waitMilliseconds(now: Transfer.now)) {
            [weak self] in
            self?.waits[t.taskID] = nil
            self?.resume(t)
            return false
        }
    }

    /// A transfer started or ended: equal shares until the next look measures. Nothing to do
    /// (on every small file's start and end) while no limit applies to any transfer.
    func transfersChanged() {
        guard download.limit > 0 || upload.limit > 0 || timer != 0 || !caps().isEmpty else { return }
        rebalance(measure: false)
    }

    private func rebalance(measure: Bool) {
        let running = transfers()
        var downRates: [Int64: Int64?] = [:], upRates: [Int64: Int64?] = [:]
        if measure {
            let now = Int64(g_get_monotonic_time())
            let seconds = Double(max(now - lookedAt, 1)) / 1_000_000
            var nextMoved: [Int64: Int64] = [:]
            for t in running {
                let bytes = t.bytesMovedThisAttempt
                nextMoved[t.taskID] = bytes
                let rate = moved[t.taskID].map { Int64(Double(bytes - $0) / seconds) }
                if t.isUpload { upRates[t.taskID] = rate } else { downRates[t.taskID] = rate }
            }
            moved = nextMoved
            lookedAt = now
        } else {
            if timer == 0 {  // the first look of a new period of limiting
                lookedAt = Int64(g_get_monotonic_time())
                moved = [:]
            }
            for t in running where moved[t.taskID] == nil { moved[t.taskID] = t.bytesMovedThisAttempt }
            for t in running {
                if t.isUpload { upRates[t.taskID] = .some(nil) } else { downRates[t.taskID] = .some(nil) }
            }
        }
        let capped = caps()
        let allowances = download.share(rates: downRates, caps: capped).merging(
            upload.share(rates: upRates, caps: capped)
        ) { $1 }
        for t in running {
            t.limitSpeed(to: allowances[t.taskID] ?? 0)
            if t.pace.bucket.paused { paused(t) }  // its wait, at the new rate
        }
        let needed =
            !running.isEmpty && (download.limit > 0 && !downRates.isEmpty || upload.limit > 0 && !upRates.isEmpty)
        if needed && timer == 0 {
            timer = MainLoop.addTimer(milliseconds: 1_000) { [weak self] in
                guard let self else { return false }
                self.timer = 0
                self.rebalance(measure: true)
                return false
            }
        }
    }
}

extension Transfer {
    /// The monotonic clock, µs (the speed limit's).
    static var now: Int64 { Int64(g_get_monotonic_time()) }

    /// Body bytes curl moved in this attempt (received, or sent for an upload).
    var bytesMovedThisAttempt: Int64 {
        Int64(ferry_easy_info_off(easy, isUpload ? CURLINFO_SIZE_UPLOAD_T : CURLINFO_SIZE_DOWNLOAD_T))
    }

    /// This transfer's speed limit, bytes per second (0: none).
    func limitSpeed(to bytesPerSecond: Int64) { pace.bucket.setRate(bytesPerSecond, now: Transfer.now) }
}
