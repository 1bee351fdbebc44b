import Testing
@testable import FerryCore

/// Credentials are bound to an origin (scheme, host, port): the rule, without network.
@Suite struct OriginRuleTests {
    @Test func originsCompareSchemeHostAndPort() {
        #expect(Origin("http://Example.org/a") == Origin("http://example.org:80/b?q"))
        #expect(Origin("https://example.org/") == Origin("https://example.org:443/"))
        #expect(Origin("http://example.org/") != Origin("https://example.org/"))
        #expect(Origin("http://example.org:8080/") != Origin("http://example.org/"))
        #expect(Origin("http://127.0.0.1:9/") != Origin("http://127.0.0.2:9/"))
        #expect(Origin("/relative") == nil)
        #expect(!Origin.same("/relative", "/relative"))   // a URL that names no origin shares none
        #expect(Origin("http://[::1]:8080/")?.description == "http://[::1]:8080")
    }

    /// Every field the app set goes to the task's origin; another origin gets only the
    /// resumable protocols' fields (an app's credential may have any name: `X-Api-Key`).
    @Test func theAppsFieldsGoOnlyToTheTasksOrigin() {
        let headers = ["Authorization": "Bearer t", "cookie": "a=b", "Proxy-Authorization": "Basic x", "X-Api-Key": "k",
                       "Private-Token": "p", "Tus-Resumable": "1.0.0", "Upload-Offset": "5", "Content-Type": "text/plain"]
        let protocolOnly = ["Tus-Resumable": "1.0.0", "Upload-Offset": "5", "Content-Type": "text/plain"]
        #expect(HeaderField.forRequest(headers, to: "http://h/files/1", taskURL: "http://h/files/") == headers)
        #expect(HeaderField.forRequest(headers, to: "http://other/files/1", taskURL: "http://h/files/") == protocolOnly)
        #expect(HeaderField.forRequest(headers, to: "https://h/files/1", taskURL: "http://h/files/") == protocolOnly)
    }

    @Test func aBoundCredentialIsForItsOriginOnly() {
        let c = BoundCredential(Credential(user: "u", password: "p"), origin: Origin("https://h/"))
        #expect(c.forRequest(to: "https://h:443/x") == Credential(user: "u", password: "p"))
        #expect(c.forRequest(to: "https://evil/x") == nil)
        #expect(c.forRequest(to: "http://h/x") == nil)
        #expect(BoundCredential(Credential(user: "u", password: "p"), origin: nil).forRequest(to: "https://h/") == nil)
    }

    /// A tus resource on another origin gets the bytes, not the app's Authorization header; the
    /// creation at the task's own URL keeps it.
    @Test func anUploadResourceElsewhereGetsNoCredentialHeaders() {
        var r = TaskRecord(id: 9, session: "s", url: "http://h/files/", host: "h", expected: 1_000)
        r.kind = .upload
        r.resumable = .tus
        r.headers = ["Authorization": "Bearer t"]
        var m = TaskMachine(r)
        let create = m.start(partialBytes: 0, now: 1).compactMap { if case .startTransfer(let p) = $0 { p } else { nil } }
        #expect(create.first?.headers["Authorization"] == "Bearer t")
        var created = TransferOutcome(curlCode: 0, httpStatus: 201)
        (created.location, created.effectiveURL) = ("http://other:81/up/1", "http://h/files/")
        let send = m.transferEnded(created, backoff: Backoff(baseMilliseconds: 1, capMilliseconds: 1, jitter: 0),
                                   resourceDeadline: nil, now: 2, random: 0)
            .compactMap { if case .startTransfer(let p) = $0 { p } else { nil } }
        #expect(send.first?.url == "http://other:81/up/1")
        #expect(send.first?.headers["Authorization"] == nil && send.first?.headers["Tus-Resumable"] == "1.0.0")
    }
}
