/// The user's download and upload limits, shared by the running transfers (`RateShare`, max-min
/// fair): when one starts or ends, equal shares at once; then every second, while a limit
/// applies and something runs under it (the `.rates` wake), by what each moved since the last
/// look. Each transfer's allowance goes to the shell as its speed limit (`speedLimits`), which
/// its token bucket keeps. Nothing at all while no limit and no task's own cap applies.
struct SpeedLimits: Sendable {
    var download = RateShare(limit: 0), upload = RateShare(limit: 0)
    /// Bytes each transfer had moved at the last look (empty: no period of limiting is open).
    var moved: [Int64: Int64] = [:]
    /// When that was (µs).
    var lookedAt: Int64 = 0

    /// A running transfer as the sharing sees it.
    struct Running: Sendable {
        let id: Int64
        let isUpload: Bool
        /// Bytes it moved (received, or sent).
        let bytes: Int64
        /// Its task's own limit (bytes per second).
        let cap: Int64?
    }

    /// Whether a change of the running transfers asks for new shares: a limit applies, a
    /// period of limiting is open (the others get what an ended one leaves), or `capped`
    /// (some running task has a limit of its own).
    func concerns(capped: Bool) -> Bool { download.limit > 0 || upload.limit > 0 || !moved.isEmpty || capped }

    /// Each running transfer's allowance (0: none). `measure`: by what each moved since the last
    /// look (the `.rates` wake); else equal shares (one started or ended, a limit changed). The
    /// wake for the next look while a limit applies to something running.
    mutating func share(_ running: [Running], now: Int64, measure: Bool) -> [AgentEffect] {
        var down: [Int64: Int64?] = [:], up: [Int64: Int64?] = [:]
        if measure {
            let seconds = Double(max(now - lookedAt, 1)) / 1_000_000
            var next: [Int64: Int64] = [:]
            for t in running {
                next[t.id] = t.bytes
                let rate = moved[t.id].map { Int64(Double(t.bytes - $0) / seconds) }
                if t.isUpload { up[t.id] = rate } else { down[t.id] = rate }
            }
            moved = next
            lookedAt = now
        } else {
            if moved.isEmpty { lookedAt = now }  // the first look of a period of limiting
            for t in running where moved[t.id] == nil { moved[t.id] = t.bytes }
            for t in running {
                if t.isUpload { up[t.id] = .some(nil) } else { down[t.id] = .some(nil) }
            }
        }
        var caps: [Int64: Int64] = [:]
        for t in running { if let cap = t.cap { caps[t.id] = cap } }
        let allowances = download.share(rates: down, caps: caps).merging(upload.share(rates: up, caps: caps)) { $1 }
        let needed = download.limit > 0 && !down.isEmpty || upload.limit > 0 && !up.isEmpty
        guard needed else {
            moved = [:]  // the period of limiting ends: no wake
            return [.speedLimits(allowances)]
        }
        return [.speedLimits(allowances), .wake(.rates, at: now + 1_000_000)]
    }
}

extension RunningTasks {
    /// The attached transfers, as the speed limits share them.
    var limited: [SpeedLimits.Running] {
        attached.sorted().compactMap { id in
            guard let r = machines[id]?.record else { return nil }
            return SpeedLimits.Running(
                id: id, isUpload: r.kind == .upload, bytes: r.received, cap: r.maxRate.flatMap { $0 > 0 ? $0 : nil })
        }
    }
}
