import Testing
@testable import FerryCore

@Suite struct TransferSpeedTests {
    @Test func smoothedSpeedAndTimeLeft() {
        var s = TransferSpeed()
        s.sample(received: 0, at: 0)
        #expect(s.bytesPerSecond == nil)
        s.sample(received: 1_000_000, at: 1_000_000)
        #expect(s.bytesPerSecond == 1_000_000)
        s.sample(received: 1_500_000, at: 2_000_000)   // one slower second moves it only partly
        #expect(s.bytesPerSecond == 800_000)
        #expect(s.secondsLeft(received: 1_500_000, expected: 3_100_000) == 2)
        #expect(s.secondsLeft(received: 1_500_000, expected: nil) == nil)
        #expect(TransferSpeed.duration(2) == "2 s" && TransferSpeed.duration(125) == "2 min" && TransferSpeed.duration(7_500) == "2 h 5 min")
    }
}
