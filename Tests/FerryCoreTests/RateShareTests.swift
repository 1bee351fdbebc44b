import Testing
@testable import FerryCore

/// Sharing a bandwidth limit among transfers (max-min fair).
@Suite struct RateShareTests {
    @Test func equalSharesWhenAllCanUseThem() {
        var s = RateShare(limit: 2_000_000)
        let a = s.share(rates: [1: nil, 2: nil, 3: nil, 4: nil])
        #expect(a == [1: 500_000, 2: 500_000, 3: 500_000, 4: 500_000])
    }

    @Test func aSlowServersShareGoesToTheOthers() {
        var s = RateShare(limit: 2_000_000)
        _ = s.share(rates: [1: nil, 2: nil, 3: nil, 4: nil])
        // Transfer 4's server sends only 100 kB/s of its 500 kB/s.
        let a = s.share(rates: [1: 500_000, 2: 500_000, 3: 500_000, 4: 100_000])
        #expect(a[4] == 125_000)
        #expect(a[1] == 625_000 && a[2] == 625_000 && a[3] == 625_000)
        #expect(a.values.reduce(0, +) == 2_000_000)
        // Its server speeds up: using all it was given, it is back to an equal share.
        let b = s.share(rates: [1: 625_000, 2: 625_000, 3: 625_000, 4: 125_000])
        #expect(b == [1: 500_000, 2: 500_000, 3: 500_000, 4: 500_000])
    }

    @Test func capsAreKeptAndTheirRestShared() {
        var s = RateShare(limit: 1_000_000)
        let a = s.share(rates: [1: nil, 2: nil], caps: [1: 100_000])
        #expect(a == [1: 100_000, 2: 900_000])
        var none = RateShare(limit: 0)
        #expect(none.share(rates: [1: nil, 2: nil], caps: [1: 100_000]) == [1: 100_000, 2: 0])
    }

    @Test func allHeldBackLeavesRoomToGrow() {
        var s = RateShare(limit: 1_000_000)
        _ = s.share(rates: [1: nil, 2: nil])
        let a = s.share(rates: [1: 10_000, 2: 10_000])
        #expect(a[1] == 500_000 && a[2] == 500_000)
        #expect(a.values.allSatisfy { $0 >= RateShare.floor })
    }
}
