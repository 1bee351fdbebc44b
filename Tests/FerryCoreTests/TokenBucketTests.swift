import Testing
@testable import FerryCore

/// A transfer's speed limit: bytes pass while credit lasts, then the transfer waits.
@Suite struct TokenBucketTests {
    @Test func holdsTheAverageToTheRate() {
        var b = TokenBucket()
        var now: Int64 = 1_000_000
        b.setRate(100_000, now: now)
        var passed = 0
        // 10 s of 16 kB pieces offered as fast as the bucket allows.
        while now < 11_000_000 {
            if b.take(16_384, now: now) {
                passed += 16_384
            } else {
                #expect(b.paused)
                now += Int64(max(b.waitMilliseconds(now: now), 1)) * 1_000
                b.paused = false
            }
        }
        #expect(abs(passed - 1_000_000) <= 50_000, "\(passed) bytes in 10 s at 100 kB/s")
    }

    @Test func anyPieceSizePassesAndIsRepaid() {
        var b = TokenBucket()
        b.setRate(10_000, now: 1_000_000)
        let small = b.take(1, now: 1_100_000)         // 0.1 s of credit
        let big = b.take(512_000, now: 1_100_000)     // one big piece: into debt
        let after = b.take(1, now: 1_200_000)
        #expect(small && big && !after)
        #expect(b.waitMilliseconds(now: 1_200_000) > 50_000)   // about 51 s to repay
    }

    @Test func noRateNeverPauses() {
        var b = TokenBucket()
        let taken = b.take(1 << 30, now: 1)
        #expect(taken)
        #expect(b.waitMilliseconds(now: 1) == 0)
    }
}
