import FerryCore
import Testing

@testable import FerryAgent

/// A transfer thread applies the core's `BodyGoAhead` at a response's head: where it allows,
/// the body goes on without waiting for the core, and the head it hands over says so.
@Suite struct ResponseReaderTests {
    static let roomy = DiskSpace(available: 1 << 30, total: 10 << 30)
    let rule = BodyGoAhead(reserve: SpaceReserve(minimumBytes: 16 << 20, fraction: 0), decodesContent: true)

    func read(status: Int, headers: [String: String], length: Int64, goAhead: BodyGoAhead?) -> ResponseReader {
        var reader = ResponseReader()
        reader.headArrived(
            status: status, contentLength: { length }, header: { headers[$0] }, stagingSpace: Self.roomy,
            finalURL: { nil }, goAhead: goAhead)
        return reader
    }

    @Test func aHeadTheRuleAllowsGoesOnAndSaysSo() {
        var reader = read(status: 200, headers: ["ETag": "\"v1\""], length: 16_384, goAhead: rule)
        #expect(reader.began && !reader.awaitingDecision && reader.announcedLength == 16_384)
        let head = reader.takeHead()
        #expect(head?.wentAhead == true && head?.etag == "\"v1\"")
    }

    @Test func anyOtherHeadWaitsForTheCore() {
        for reader in [
            read(status: 200, headers: [:], length: 16_384, goAhead: nil),  // no leave: a resume, an app's
            read(status: 200, headers: ["Content-Encoding": "gzip"], length: 100, goAhead: rule),
            read(status: 200, headers: [:], length: 2 << 30, goAhead: rule),  // past the reserve
        ] {
            var r = reader
            #expect(!r.began && r.awaitingDecision)
            #expect(r.takeHead()?.wentAhead == false)
        }
    }

    /// A batch of the threads' reports tells the core which heads that went ahead came with
    /// their attempt's end (and its bytes): only those, and only of the same attempt.
    @Test func aHeadIsMarkedWithItsAttemptsEndInTheSameBatch() {
        var ahead = ResponseHead(status: 200, totalLength: 10)
        ahead.wentAhead = true
        let end = TransferOutcome(curlCode: 0, httpStatus: 200, bytesThisAttempt: 10)
        let batch = [
            CarrierReport(task: 1, attempt: 7, input: .responseBegan(task: 1, ahead)),
            CarrierReport(task: 2, attempt: 8, input: .responseBegan(task: 2, ahead)),  // its end comes later
            CarrierReport(task: 3, attempt: 9, input: .responseBegan(task: 3, ResponseHead(status: 200))),  // waits
            CarrierReport(task: 4, attempt: 3, input: .responseBegan(task: 4, ahead)),  // an earlier attempt's
            CarrierReport(task: 1, attempt: 7, input: .transferEnded(task: 1, received: 10, end)),
            CarrierReport(task: 3, attempt: 9, input: .transferEnded(task: 3, received: 10, end)),
            CarrierReport(task: 4, attempt: 4, input: .transferEnded(task: 4, received: 10, end)),
        ]
        let marks: [Int64?] = Transfers.markingEnds(batch).prefix(4).map {
            if case .responseBegan(_, let head) = $0.input { head.endedWith } else { -1 }
        }
        #expect(marks == [10, nil, nil, nil])
    }
}
