import Testing
@testable import FerryCore

/// The resumable-upload decisions, without network: which protocol an OPTIONS answer means,
/// which request comes next, what is stored before a byte is sent.
private func upload(_ resumable: ResumableProtocol?, method: String? = nil, uploadURL: String? = nil) -> TaskMachine {
    var r = TaskRecord(id: 9, session: "s", url: "http://h/files/", host: "h", expected: 1_000)
    r.kind = .upload
    r.resumable = resumable
    r.method = method
    r.uploadURL = uploadURL
    return TaskMachine(r)
}
private let backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)

private func plans(_ actions: [TaskMachine.Action]) -> [TaskMachine.TransferPlan] {
    actions.compactMap { if case .startTransfer(let p) = $0 { p } else { nil } }
}

private extension TaskMachine {
    mutating func ended(_ o: TransferOutcome) -> [Action] {
        transferEnded(o, backoff: backoff, resourceDeadline: nil, now: 2, random: 0)
    }
}

private func answer(_ status: Int, location: String? = nil, offset: Int64? = nil, complete: Bool? = nil,
                    acceptPatch: String? = nil, tus: String? = nil, sent: Int64 = 0) -> TransferOutcome {
    var o = TransferOutcome(curlCode: status >= 400 ? 22 : 0, httpStatus: status, bytesThisAttempt: sent)
    (o.location, o.uploadOffset, o.uploadComplete, o.acceptPatch, o.tusExtensions) = (location, offset, complete, acceptPatch, tus)
    return o
}

@Suite struct ResumableUploadMachineTests {
    @Test func optionsAnswersChooseTheProtocol() {
        #expect(TaskMachine.discovered(answer(204, tus: "creation,termination")) == .tus)
        #expect(TaskMachine.discovered(answer(204, tus: "termination")) == .upgrade)   // tus without creation: no use
        #expect(TaskMachine.discovered(answer(204, acceptPatch: "application/json, application/partial-upload")) == .ietf)
        #expect(TaskMachine.discovered(answer(204, acceptPatch: "*/*")) == .upgrade)   // the draft: not enough
        #expect(TaskMachine.discovered(answer(405)) == .upgrade)
    }

    @Test func automaticAsksOnceThenCreatesCarefullyWithTheTasksMethod() {
        var m = upload(nil, method: "POST")
        let first = plans(m.start(partialBytes: 0, now: 1))
        #expect(first.first?.upload == .discover)
        #expect(first.first?.headers["Upload-Draft-Interop-Version"] == nil)   // OPTIONS claims nothing
        let create = plans(m.ended(answer(204, acceptPatch: "application/partial-upload")))
        #expect(m.record.resumable == .ietf)
        #expect(create.first?.upload == .create(length: 1_000, method: "POST"))
        #expect(create.first?.url == "http://h/files/")
        #expect(create.first?.headers["Upload-Complete"] == "?0")
        #expect(create.first?.headers["Upload-Length"] == "1000")
        #expect(create.first?.headers["Upload-Draft-Interop-Version"] == ResumableProtocol.ietfInteropVersion)
    }

    @Test func theResourceIsStoredBeforeTheFirstByteAndAPatchSendsAll() {
        var m = upload(.ietf)
        _ = m.start(partialBytes: 0, now: 1)
        let actions = m.ended(answer(201, location: "/uploads/abc"))
        #expect(actions.first == .persist)   // the URL is durable before the PATCH starts
        #expect(m.record.uploadURL == "http://h/uploads/abc")
        let send = plans(actions).first
        #expect(send?.upload == .send(offset: 0, length: 1_000))
        #expect(send?.url == "http://h/uploads/abc")
        #expect(send?.headers["Content-Type"] == "application/partial-upload")
        #expect(send?.headers["Upload-Complete"] == "?1")
        #expect(send?.headers["Upload-Offset"] == "0")
    }

    @Test func anInterruptedUploadAsksItsOffsetAndSendsTheRest() {
        var m = upload(.ietf, uploadURL: "http://h/uploads/abc")
        #expect(plans(m.start(partialBytes: 0, now: 1)).first?.upload == .askOffset)
        let send = plans(m.ended(answer(204, offset: 600, complete: false)))
        #expect(send.first?.upload == .send(offset: 600, length: 400))
        #expect(m.record.received == 600)
    }

    @Test func aConflictingOffsetIsTakenFromTheAnswer() {
        var m = upload(.ietf, uploadURL: "http://h/uploads/abc")
        _ = m.start(partialBytes: 0, now: 1)
        _ = m.ended(answer(204, offset: 600, complete: false))
        #expect(plans(m.ended(answer(409, offset: 700))).first?.upload == .send(offset: 700, length: 300))
    }

    @Test func aCompleteUploadWhoseAnswerWasLostIsDone() {
        var m = upload(.ietf, uploadURL: "http://h/uploads/abc")
        _ = m.start(partialBytes: 0, now: 1)
        let actions = m.ended(answer(204, offset: 1_000, complete: true))
        #expect(actions.contains(.finalize))
        #expect(plans(actions).isEmpty)
    }

    @Test func aGoneResourceIsMadeAgain() {
        var m = upload(.ietf, uploadURL: "http://h/uploads/old")
        _ = m.start(partialBytes: 0, now: 1)
        let again = plans(m.ended(answer(404)))
        #expect(again.first?.upload == .create(length: 1_000, method: "PUT"))
        #expect(m.record.uploadURL == nil)
    }

    @Test func aPlainUploadInvitesTheUpgradeAndA104MakesItResumable() {
        var m = upload(.upgrade)
        let plain = plans(m.start(partialBytes: 0, now: 1)).first
        #expect(plain?.upload == nil)
        #expect(plain?.headers["Upload-Complete"] == "?1")
        #expect(plain?.headers["Upload-Length"] == "1000")
        #expect(m.resourceAnnounced("/uploads/xyz") == [.persist])
        #expect(m.record.resumable == .ietf)
        #expect(m.record.uploadURL == "http://h/uploads/xyz")
        #expect(m.resourceAnnounced("/uploads/other").isEmpty)   // only the first one counts
        // The connection drops: the next attempt asks the announced resource.
        _ = m.ended(TransferOutcome(curlCode: 55, curlMessage: "Send failure", httpStatus: 0, bytesThisAttempt: 300))
        #expect(m.record.state == .waiting)
        _ = m.retryDue(now: 3)
        #expect(plans(m.start(partialBytes: 0, now: 4)).first?.upload == .askOffset)
    }

    @Test func noneInvitesNothingAndIgnoresA104() {
        var m = upload(ResumableProtocol.none)
        let plain = plans(m.start(partialBytes: 0, now: 1)).first
        #expect(plain?.headers["Upload-Complete"] == nil)
        #expect(m.resourceAnnounced("/uploads/xyz").isEmpty)
    }

    @Test func tusKeepsItsOwnHeadersAndPost() {
        var m = upload(.tus, method: "PUT")
        m.record.uploadFile = "/home/ann/Pictures/holiday.jpg"
        m.record.headers = ["Content-Type": "image/jpeg"]
        let create = plans(m.start(partialBytes: 0, now: 1)).first
        #expect(create?.upload == .create(length: 1_000, method: "POST"))
        #expect(create?.headers["Tus-Resumable"] == ResumableProtocol.tusVersion)
        #expect(create?.headers["Upload-Complete"] == nil)
        #expect(create?.headers["Upload-Metadata"] == "filename aG9saWRheS5qcGc=,filetype aW1hZ2UvanBlZw==")   // holiday.jpg, image/jpeg
        let send = plans(m.ended(answer(201, location: "/tus/files/1"))).first
        #expect(send?.headers["Content-Type"] == "application/offset+octet-stream")
    }

    /// Discovery says Tus-Resumable (some servers answer with their tus headers only then); a
    /// file over the server's Tus-Max-Size is refused by name before a byte is sent.
    @Test func discoveryAsksAsTusAndHonoursTusMaxSize() {
        var m = upload(nil, method: "POST")
        let first = plans(m.start(partialBytes: 0, now: 1))
        #expect(first.first?.upload == .discover && first.first?.headers["Tus-Resumable"] == "1.0.0")
        var answer = answer(204, tus: "creation")
        answer.tusMaxSize = 999
        #expect(plans(m.ended(answer)).isEmpty)
        #expect(m.record.state == .failed && (m.record.error ?? "").contains("Tus-Max-Size"), "\(m.record.error ?? "")")
        var roomy = upload(nil, method: "POST")
        _ = roomy.start(partialBytes: 0, now: 1)
        answer.tusMaxSize = 1_000
        #expect(plans(roomy.ended(answer)).first?.upload == .create(length: 1_000, method: "POST"))
    }

    /// A large file goes in bounded requests, growing while they are quick; each IETF append
    /// but the last says Upload-Complete: ?0, and a server's offset leads the next.
    @Test func aLargeFileGoesInBoundedRequests() {
        let mib: Int64 = 1 << 20
        var m = upload(.ietf)
        m.record.expected = 40 * mib
        _ = m.start(partialBytes: 0, now: 1)
        var send = plans(m.transferEnded(answer(201, location: "/u/1"), backoff: backoff, resourceDeadline: nil, now: 10, random: 0)).first
        #expect(send?.upload == .send(offset: 0, length: 4 * mib) && send?.headers["Upload-Complete"] == "?0")
        // Quick (0.1 s): the next is twice as large.
        send = plans(m.transferEnded(answer(204, offset: 4 * mib), backoff: backoff, resourceDeadline: nil, now: 100_010, random: 0)).first
        #expect(send?.upload == .send(offset: 4 * mib, length: 8 * mib))
        #expect(m.record.received == 4 * mib)
        // Slow (3 s): it stays; a server that kept less than was sent leads.
        send = plans(m.transferEnded(answer(204, offset: 11 * mib), backoff: backoff, resourceDeadline: nil, now: 3_100_010, random: 0)).first
        #expect(send?.upload == .send(offset: 11 * mib, length: 8 * mib))
        // The last request says so and its answer is the attempt's.
        var at: Int64 = 3_100_010
        while let next = send, case .send(let offset, let length) = next.upload, offset + length < 40 * mib {
            at += 3_000_000
            send = plans(m.transferEnded(answer(204, offset: offset + length), backoff: backoff, resourceDeadline: nil, now: at, random: 0)).first
        }
        #expect(send?.headers["Upload-Complete"] == "?1")
        let done = m.transferEnded(answer(204, offset: 40 * mib), backoff: backoff, resourceDeadline: nil, now: at + 1, random: 0)
        #expect(done.contains(.finalize) && plans(done).isEmpty)
    }

    /// 413: the same bytes again in smaller requests, from the offset the server says it has;
    /// never larger again; at the smallest size, a failure naming the status.
    @Test func tooLargeMakesTheRequestsSmaller() {
        let mib: Int64 = 1 << 20
        var m = upload(.tus, uploadURL: "http://h/tus/1")
        m.record.expected = 12 * mib
        _ = m.start(partialBytes: 0, now: 1)
        var send = plans(m.ended(answer(200, offset: 0))).first
        #expect(send?.upload == .send(offset: 0, length: 4 * mib))
        #expect(plans(m.ended(answer(413))).first?.upload == .askOffset)
        send = plans(m.ended(answer(200, offset: 0))).first
        #expect(send?.upload == .send(offset: 0, length: 2 * mib))
        send = plans(m.ended(answer(204, offset: 2 * mib))).first   // quick, but not past the ceiling
        #expect(send?.upload == .send(offset: 2 * mib, length: 2 * mib))
        var small = PatchSize()
        while small.refused(small.current) {}
        #expect(small.current == PatchSize.smallest)
    }
}

/// The core reads an upload answer's raw fields (the shell only hands them over).
@Suite struct UploadAnswerFieldsTests {
    @Test func rawFieldsMeanWhatTusAndTheDraftSay() {
        var o = TransferOutcome(curlCode: 0, httpStatus: 204)
        o.uploadFields = ["tus-resumable": "1.0.0", "tus-max-size": "1000", "upload-offset": "12"]
        #expect(o.tusExtensions == "" && o.tusMaxSize == 1_000 && o.uploadOffset == 12)
        o.uploadFields = ["tus-max-size": "1000", "upload-offset": "twelve", "upload-complete": "?1"]
        #expect(o.tusExtensions == nil && o.tusMaxSize == nil && o.uploadOffset == nil && o.uploadComplete == true)
        o.uploadFields = ["upload-complete": "?0", "accept-patch": "application/partial-upload", "location": "/r/1"]
        #expect(o.uploadComplete == false && o.acceptPatch == "application/partial-upload" && o.location == "/r/1")
        o.uploadFields = ["upload-complete": "true"]
        #expect(o.uploadComplete == nil)
    }
}

