import Testing
@testable import FerryCore

/// Each transfer's receive buffer is sized by how many may run at once: the largest while few
/// may, less as more may, never below curl's own size; a start carries it to the shell.
@Suite struct ReceiveBufferTests {
    @Test func theBuffersOfWhatMayRunShareABudget() {
        #expect(ReceiveBuffer.size(maxTransfers: 6) == 512 * 1024)
        #expect(ReceiveBuffer.size(maxTransfers: 16) == 512 * 1024)
        #expect(ReceiveBuffer.size(maxTransfers: 64) == 128 * 1024)
        #expect(ReceiveBuffer.size(maxTransfers: 500) == 16 * 1024)
        #expect(ReceiveBuffer.size(maxTransfers: 0) == 512 * 1024)
        for n in 1...2_000 { #expect(ReceiveBuffer.size(maxTransfers: n) * min(n, 512) <= ReceiveBuffer.budget) }
    }

    @Test func aStartCarriesTheBufferForTheSettingOfTheTime() throws {
        var d = try CoreDriver.started(maxTotal: 500, maxPerHost: 500)
        _ = try d.download("http://a/1")
        #expect(try buffers(d.wake(.schedule)) == [16 * 1024])

        var fewer = d.core.settings
        fewer.maxTotal = 6
        _ = try d.run(.settingsChanged(fewer))
        _ = try d.download("http://a/2")
        #expect(try buffers(d.wake(.schedule)) == [512 * 1024])
    }

    private func buffers(_ effects: [AgentEffect]) -> [Int] {
        effects.compactMap { if case .startTransfer(_, let plan, _, _) = $0 { plan.receiveBuffer } else { nil } }
    }
}
