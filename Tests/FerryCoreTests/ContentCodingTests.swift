import Testing
@testable import FerryCore

/// What a download keeps of a content-encoded answer: the decoded document, or a compressed
/// file's own bytes; and never a resume that counts decoded bytes against the encoded entity.
@Suite struct ContentCodingTests {
    private func started(_ url: String, output: String? = nil, etag: String? = nil) -> (TaskMachine, TaskMachine.TransferPlan?) {
        var m = TaskMachine(TaskRecord(id: 3, session: "s", url: url, host: "h", etag: etag, output: output))
        let plan = m.start(partialBytes: 0, now: 1).compactMap { a -> TaskMachine.TransferPlan? in
            if case .startTransfer(let p) = a { return p } else { return nil }
        }.first
        return (m, plan)
    }

    @Test func aDocumentIsDecodedAndNeverResumedByRange() {
        var (m, plan) = started("http://h/api/data.json", etag: "\"v1\"")
        #expect(plan?.decodesContent == true)
        let (decision, _) = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 812, etag: "\"v2\"",
                                            lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", suggestedName: nil,
                                            contentEncoding: "gzip", contentType: "application/json")
        #expect(decision == .restartFromZero)
        // 812 is the encoded length; the validators would let a Range count decoded bytes.
        #expect(m.record.expected == nil && m.record.resumeValidator == nil)
        #expect(!m.record.keepsEncoding)
    }

    @Test func anAnswerWithoutEncodingKeepsItsLengthAndValidators() {
        var (m, _) = started("http://h/api/data.json")
        _ = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 812, etag: "\"v2\"", lastModified: nil,
                            suggestedName: nil, contentEncoding: "identity", contentType: "application/json")
        #expect(m.record.expected == 812 && m.record.resumeValidator == "\"v2\"")
    }

    @Test func aFileNamedAsCompressedIsFetchedAsSent() {
        #expect(started("http://h/pub/linux-6.1.tar.gz").1?.decodesContent == false)
        #expect(started("http://h/get?id=4", output: "/home/u/x.TGZ").1?.decodesContent == false)
        #expect(started("http://h/dict.zst").1?.decodesContent == false)
        #expect(started("http://h/report.pdf").1?.decodesContent == true)
    }

    @Test func aCompressedFileLabelledByItsTypeIsFetchedAgainAsSent() {
        var (m, _) = started("http://h/get?id=4")
        let (decision, _) = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 500, etag: nil, lastModified: nil,
                                            suggestedName: nil, contentEncoding: "gzip", contentType: "application/x-gzip")
        guard case .reject = decision else { Issue.record("\(decision)"); return }
        #expect(m.record.keepsEncoding)
        // The next attempt (a new machine from the stored record) lets curl decode nothing.
        var again = TaskMachine(m.record)
        again.record.state = .queued
        let plan = again.start(partialBytes: 0, now: 2).compactMap { a -> TaskMachine.TransferPlan? in
            if case .startTransfer(let p) = a { return p } else { return nil }
        }.first
        #expect(plan?.decodesContent == false)
        let (body, _) = again.responseBegan(status: 200, contentRangeStart: nil, totalLength: 500, etag: nil, lastModified: nil,
                                            suggestedName: nil, contentEncoding: "gzip", contentType: "application/x-gzip")
        #expect(body == .restartFromZero && again.record.expected == 500)
    }

    @Test func aNameFromContentDispositionAlsoSaysCompressed() {
        var (m, _) = started("http://h/get?id=4")
        let (decision, _) = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 500, etag: nil, lastModified: nil,
                                            suggestedName: "backup.tar.gz", contentEncoding: "gzip", contentType: "application/x-tar")
        guard case .reject = decision else { Issue.record("\(decision)"); return }
        #expect(m.record.keepsEncoding)
    }

    @Test func encodingNamesAndTypes() {
        #expect(!ContentCoding.isEncoded(nil) && !ContentCoding.isEncoded(" identity ") && ContentCoding.isEncoded("br"))
        #expect(ContentCoding.isLabelledFile(contentType: "application/gzip; charset=binary", name: nil))
        #expect(!ContentCoding.isLabelledFile(contentType: "text/html", name: "index.html"))
    }

    /// A resumed download whose server now encodes its answer is fetched whole again: encoded
    /// bytes of a range cannot follow the bytes on disk.
    @Test func anEncodedAnswerToARangeStartsAgain() {
        var m = TaskMachine(TaskRecord(id: 3, session: "s", url: "http://h/data.json", host: "h", etag: "\"v1\""))
        _ = m.start(partialBytes: 500, now: 1)
        let (decision, _) = m.responseBegan(status: 206, contentRangeStart: 500, totalLength: 900, etag: "\"v1\"", lastModified: nil,
                                            suggestedName: nil, contentEncoding: "gzip", contentType: "application/json")
        guard case .reject = decision else { Issue.record("\(decision)"); return }
    }
}
