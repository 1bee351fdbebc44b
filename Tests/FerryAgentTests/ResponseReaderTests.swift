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
}
