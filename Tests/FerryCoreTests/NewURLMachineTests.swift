import Testing
@testable import FerryCore

/// A download given a new URL (a fresh signed link): what the machine keeps, drops and says.
@Suite struct NewURLMachineTests {
    private static let backoff = Backoff(baseMilliseconds: 1_000, capMilliseconds: 60_000, jitter: 0)

    /// A download that fetched 500 bytes of a strongly tagged file, then got `status`.
    private static func failedMidway(status: Int) -> (TaskMachine, [TaskMachine.Action]) {
        var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "https://cdn.example/f.pdf?sig=1", host: "cdn.example",
                                       state: .queued, etag: "\"v1\""))
        _ = m.start(partialBytes: 500, now: 1)
        let actions = m.transferEnded(TransferOutcome(curlCode: 22, httpStatus: status), backoff: backoff,
                                      resourceDeadline: nil, now: 2, random: 0)
        return (m, actions)
    }

    @Test(arguments: [410, 403])
    func aLinkThatEndedKeepsItsBytes(_ status: Int) {
        let (m, actions) = Self.failedMidway(status: status)
        #expect(m.record.state == .failed)
        #expect(!actions.contains(.discardPartial), "the bytes went with the link")
        #expect(actions.contains { if case .emit(.completed(_, _, let resumable)) = $0 { resumable } else { false } })
    }

    @Test func aServerErrorThatIsNotTheLinksStillDiscards() {
        let (_, actions) = Self.failedMidway(status: 400)
        #expect(actions.contains(.discardPartial))
    }

    @Test func aFailedTaskGivenANewURLContinuesFromItsBytesWithIfRange() throws {
        var (m, _) = Self.failedMidway(status: 410)
        let (dropped, actions) = try m.newURL("https://cdn.example/f.pdf?sig=2", host: "cdn.example", now: 3)
        #expect(!dropped)
        #expect(actions == [.persist])
        #expect(m.record.state == .queued && m.record.error == nil && m.record.errorName == nil)
        let start = m.start(partialBytes: 500, now: 4)
        #expect(start.contains {
            if case .startTransfer(let p) = $0 { p.url == "https://cdn.example/f.pdf?sig=2" && p.offset == 500 && p.ifRange == "\"v1\"" } else { false }
        })
    }

    /// Another file at the new URL: the whole of it comes, and the app hears it starts over.
    @Test func anotherFileAtTheNewURLStartsOverAndSaysSo() throws {
        var (m, _) = Self.failedMidway(status: 410)
        _ = try m.newURL("https://other.example/g.pdf", host: "other.example", now: 3)
        _ = m.start(partialBytes: 500, now: 4)
        let (decision, actions) = m.responseBegan(status: 200, contentRangeStart: nil, totalLength: 900,
                                                  etag: "\"v2\"", lastModified: nil, suggestedName: nil)
        #expect(decision == .restartFromZero)
        #expect(actions.contains(.emit(.resumed(offset: 0, expected: 900))))
        #expect(m.record.received == 0 && m.record.etag == "\"v2\"")
    }

    @Test func headerFieldsStayOnTheirOriginOnly() throws {
        var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "https://a.example/f", host: "a.example", state: .paused))
        m.record.headers = ["Authorization": "Bearer secret", "X-Api-Key": "k"]
        var (dropped, _) = try m.newURL("https://a.example/f?fresh=1", host: "a.example", now: 1)
        #expect(!dropped && m.record.headers.count == 2)
        (dropped, _) = try m.newURL("https://b.example/f", host: "b.example", now: 2)
        #expect(dropped && m.record.headers.isEmpty)
        #expect(m.record.state == .paused && m.record.host == "b.example")
    }

    @Test func aRunningTaskStopsAndIsQueuedAgain() throws {
        var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "https://a.example/f", host: "a.example", state: .queued))
        _ = m.start(partialBytes: 0, now: 1)
        let (_, actions) = try m.newURL("https://a.example/g", host: "a.example", now: 2)
        #expect(actions == [.stopTransfer, .persist] && m.record.state == .queued)
    }

    @Test func uploadsAndEndedTasksAreRefused() {
        var record = TaskRecord(id: 7, session: "s", url: "https://a.example/u", host: "a.example", state: .failed)
        record.kind = .upload
        var upload = TaskMachine(record)
        #expect(throws: FerryError.self) { _ = try upload.newURL("https://a.example/v", host: "a.example", now: 1) }
        for state in [TaskState.completed, .canceled] {
            var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "https://a.example/f", host: "a.example", state: state))
            #expect(throws: FerryError.self) { _ = try m.newURL("https://a.example/g", host: "a.example", now: 1) }
            #expect(m.record.url == "https://a.example/f")
        }
    }
}
