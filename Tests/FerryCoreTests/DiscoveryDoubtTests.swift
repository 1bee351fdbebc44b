import Testing
@testable import FerryCore

/// Discovery that gives up (issue 58, items 5 and 6): a server that never answers OPTIONS gets
/// the upload itself after a few probes; an answer that names tus without offering it is said
/// with the failure; a 400 to a request larger than any taken makes the requests smaller once.
@Suite struct DiscoveryDoubtTests {
    private static let backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)
    private static let mib: Int64 = 1 << 20

    private static func upload(_ resumable: ResumableProtocol?, expected: Int64 = 1_000) -> TaskMachine {
        var r = TaskRecord(id: 9, session: "s", url: "http://h/files", host: "h", expected: expected)
        r.kind = .upload
        r.resumable = resumable
        r.method = "POST"
        return TaskMachine(r)
    }

    private static func plans(_ actions: [TaskMachine.Action]) -> [TaskMachine.TransferPlan] {
        actions.compactMap { if case .startTransfer(let p) = $0 { p } else { nil } }
    }

    private static func failure(_ actions: [TaskMachine.Action]) -> String? {
        actions.lazy.compactMap { if case .emit(.completed(let error, _, _)) = $0 { error } else { nil } }.first
    }

    private static func ended(_ m: inout TaskMachine, _ o: TransferOutcome, now: Int64 = 2) -> [TaskMachine.Action] {
        m.transferEnded(o, backoff: backoff, resourceDeadline: nil, now: now, random: 0)
    }

    /// fastapi-tusd's OPTIONS handler crashes: an empty reply each time. Two probes are retried;
    /// the third failing starts the upload itself, and its failure says why and what forces tus.
    @Test func aServerThatNeverAnswersOptionsGetsTheUploadAfterThreeProbes() {
        var m = Self.upload(nil)
        let empty = TransferOutcome(curlCode: 52, curlMessage: "Empty reply from server", httpStatus: 0)
        for round in 1...2 {
            #expect(Self.plans(m.start(partialBytes: 0, now: Int64(round) * 10)).first?.upload == .discover)
            _ = Self.ended(&m, empty, now: Int64(round) * 10 + 1)
            #expect(m.record.state == .waiting && m.record.resumable == nil, "probe \(round) is retried")
            _ = m.retryDue(now: Int64(round) * 10 + 5)
        }
        _ = m.start(partialBytes: 0, now: 30)
        let plain = Self.plans(Self.ended(&m, empty, now: 31)).first
        #expect(plain?.upload == nil && plain?.url == "http://h/files", "the upload itself, after three probes")
        #expect(m.record.resumable == .upgrade)
        let refused = Self.ended(&m, TransferOutcome(curlCode: 22, httpStatus: 400), now: 32)
        let message = Self.failure(refused) ?? ""
        #expect(message.contains("HTTP 400") && message.contains("no answer 3 times")
                && message.contains("--resumable tus"), "\(message)")
    }

    /// A connection refused is no answer to count: the probe waits for the server as any attempt.
    @Test func aServerThatIsDownIsNotGivenUpOn() {
        var m = Self.upload(nil)
        m.record.attempts = 5
        _ = m.start(partialBytes: 0, now: 1)
        _ = Self.ended(&m, TransferOutcome(curlCode: 7, httpStatus: 0))
        #expect(m.record.state == .waiting && m.record.resumable == nil)
    }

    /// drf-tus answers OPTIONS with Tus-Resumable and its tus fields in a JSON body: no protocol
    /// found, the plain upload gets 405, and the failure says the answer looked like tus.
    @Test func anAnswerThatNamesTusWithoutOfferingItIsSaidWithTheFailure() {
        var m = Self.upload(nil)
        _ = m.start(partialBytes: 0, now: 1)
        var options = TransferOutcome(curlCode: 0, httpStatus: 200)
        options.uploadFields["tus-resumable"] = "1.0.0"
        _ = Self.ended(&m, options)
        #expect(m.record.resumable == .upgrade)
        var refused = TransferOutcome(curlCode: 22, httpStatus: 405)
        refused.uploadFields["tus-resumable"] = "1.0.0"
        let message = Self.failure(Self.ended(&m, refused, now: 3)) ?? ""
        #expect(message.contains("HTTP 405") && message.contains("Tus-Resumable") && message.contains("--resumable tus"),
                "\(message)")
    }

    @Test func aPlainServersFailureCarriesNoHint() {
        var m = Self.upload(nil)
        _ = m.start(partialBytes: 0, now: 1)
        _ = Self.ended(&m, TransferOutcome(curlCode: 22, httpStatus: 405))
        let failed = Self.ended(&m, TransferOutcome(curlCode: 22, httpStatus: 403), now: 3)
        #expect(Self.failure(failed) == "server answered HTTP 403")
    }

    /// Django answers a body over 2.5 MB with 400: the 4 MiB PATCH is asked again at 2 MiB after
    /// a HEAD; a second 400 is a failure (not the size, then).
    @Test func aBadRequestToALargerPatchHalvesItOnce() {
        var m = Self.upload(.tus, expected: 12 * Self.mib)
        m.record.uploadURL = "http://h/files/1"
        _ = m.start(partialBytes: 0, now: 1)
        var next = Self.plans(Self.ended(&m, Self.offset(0))).first
        #expect(next?.upload == .send(offset: 0, length: 4 * Self.mib))
        let ask = Self.plans(Self.ended(&m, TransferOutcome(curlCode: 22, httpStatus: 400))).first
        #expect(ask?.upload == .askOffset)
        next = Self.plans(Self.ended(&m, Self.offset(0))).first
        #expect(next?.upload == .send(offset: 0, length: 2 * Self.mib))
        next = Self.plans(Self.ended(&m, Self.offset(2 * Self.mib, status: 204), now: 3_000_000)).first
        #expect(next?.upload == .send(offset: 2 * Self.mib, length: 2 * Self.mib))
        let again = Self.ended(&m, TransferOutcome(curlCode: 22, httpStatus: 400), now: 3_100_000)
        #expect(Self.plans(again).isEmpty && Self.failure(again)?.contains("HTTP 400") == true, "once only")
    }

    @Test func aBadRequestToAPatchNoLargerThanOneTakenIsAFailure() {
        var size = PatchSize()
        size.took(4 * Self.mib, micros: 2_000_000)
        let halved = size.refusedWithBadRequest(4 * Self.mib)
        #expect(!halved)
        #expect(size.current == 4 * Self.mib)
    }

    private static func offset(_ n: Int64, status: Int = 200) -> TransferOutcome {
        var o = TransferOutcome(curlCode: 0, httpStatus: status)
        o.uploadOffset = n
        return o
    }
}
