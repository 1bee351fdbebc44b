import Testing
@testable import FerryCore

/// The speed limits are shared by the core: equal shares when a transfer starts or ends, then
/// each second (the `rates` wake) by what each moved; nothing at all while no limit applies.
@Suite struct SpeedLimitsTests {
    static let kib: Int64 = 1_024

    static func limits(_ effects: [AgentEffect]) -> [Int64: Int64]? {
        for case .speedLimits(let map) in effects { return map }
        return nil
    }

    static func rateWake(_ effects: [AgentEffect]) -> Bool {
        effects.contains { if case .wake(.rates, _) = $0 { true } else { false } }
    }

    @Test func aLimitIsSharedAtOnceThenByWhatEachMovedAndLetGoWhenNothingRuns() throws {
        var settings = AgentCore.Settings(stateDirectory: "/state")
        settings.downloadLimit = 200 * Self.kib
        var d = CoreDriver(settings)
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1"), b = try d.download("http://b/2")
        let started = try d.wake(.schedule)
        #expect(started.started == [a, b])
        #expect(Self.limits(started) == [a: 100 * Self.kib, b: 100 * Self.kib])   // equal shares at once
        #expect(Self.rateWake(started))
        // A second on: a's server gave it 10 KiB, b took its whole share.
        try d.run(.progressed(task: a, received: 10 * Self.kib))
        try d.run(.progressed(task: b, received: 100 * Self.kib))
        d.now += 1_000_000
        let looked = try d.wake(.rates)
        let shares = try #require(Self.limits(looked))
        #expect(shares[a]! < 20 * Self.kib && shares[a]! + shares[b]! == 200 * Self.kib, "\(shares)")   // b gets what a leaves
        #expect(Self.rateWake(looked))
        // Both end: nothing runs under the limit, no more looks.
        try d.run(.transferEnded(task: a, received: 10 * Self.kib, TransferOutcome(curlCode: 0, httpStatus: 200)))
        let last = try d.run(.transferEnded(task: b, received: 100 * Self.kib, TransferOutcome(curlCode: 0, httpStatus: 200)))
        #expect(Self.limits(last) == [:] && !Self.rateWake(last))
    }

    @Test func withoutALimitNothingIsSharedAndNothingWakes() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1")
        let started = try d.wake(.schedule)
        #expect(started.started == [a])
        #expect(Self.limits(started) == nil && !Self.rateWake(started))
        let ended = try d.run(.transferEnded(task: a, received: 1, TransferOutcome(curlCode: 0, httpStatus: 200)))
        #expect(Self.limits(ended) == nil && !Self.rateWake(ended))
    }

    @Test func aLimitSetWhileTransfersRunAppliesAtOnce() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let a = try d.download("http://a/1")
        try d.wake(.schedule)
        var settings = d.core.settings
        settings.uploadLimit = 0
        settings.downloadLimit = 64 * Self.kib
        let changed = try d.run(.settingsChanged(settings))
        #expect(Self.limits(changed) == [a: 64 * Self.kib] && Self.rateWake(changed))
    }
}
