/// One bandwidth limit shared by the transfers running under it, max-min fair: each gets an
/// equal share, except that one held back by its server (it used clearly less than it was
/// allowed) or by a cap of its own is given about what it uses, and what it leaves goes to the
/// others. Looked at again every second while a limit applies; the allowances are curl's
/// per-transfer speed limits until the next look.
public struct RateShare: Sendable, Equatable {
    /// Bytes per second for all of them together (0: no limit; only caps apply).
    public var limit: Int64
    /// The last allowances given.
    public private(set) var allowances: [Int64: Int64] = [:]
    /// The least any transfer is allowed: curl reads 0 as "no limit", and a transfer held to
    /// a trickle could not show that its server got faster.
    public static let floor: Int64 = 4_096

    public init(limit: Int64) { self.limit = limit }

    /// `rates`: each running transfer's bytes per second since the last look (nil: it just
    /// started). `caps`: transfers' own limits. Returns each one's allowance (0: unlimited).
    public mutating func share(rates: [Int64: Int64?], caps: [Int64: Int64] = [:]) -> [Int64: Int64] {
        let ids = rates.keys.sorted()
        guard limit > 0 else {
            allowances = Dictionary(uniqueKeysWithValues: ids.map { ($0, caps[$0].map { max($0, Self.floor) } ?? 0) })
            return allowances
        }
        // What each would take: its cap, or about what it used when its server held it back.
        var demand: [Int64: Int64] = [:]
        for id in ids {
            let cap = caps[id].map { max($0, Self.floor) } ?? .max
            if let rate = rates[id] ?? nil, let before = allowances[id], rate < before / 10 * 8 {
                demand[id] = min(cap, max(rate / 4 * 5, Self.floor))
            } else {
                demand[id] = cap
            }
        }
        // Water-filling: the smallest demands are met first, the rest split what is left equally.
        var left = limit, given: [Int64: Int64] = [:]
        let order = ids.sorted { (demand[$0]!, $0) < (demand[$1]!, $1) }
        for (i, id) in order.enumerated() {
            let share = left / Int64(order.count - i)
            given[id] = min(demand[id]!, share)
            left -= given[id]!
        }
        // Nobody wants the rest now: the ones held back by their servers may grow into it.
        let growing = ids.filter { given[$0]! < (caps[$0] ?? .max) }
        if left > 0, !growing.isEmpty {
            for id in growing { given[id]! += left / Int64(growing.count) }
        }
        for id in ids { given[id] = max(given[id]!, Self.floor) }
        allowances = given
        return given
    }
}
