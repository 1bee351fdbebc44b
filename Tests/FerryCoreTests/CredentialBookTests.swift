import Testing
@testable import FerryCore

/// Where credentials go, as decisions: a URL's into the keyring (never the store), a 401 asks
/// the keyring once before the app, a session's kept answer serves its next task at once.
@Suite struct CredentialBookTests {
    let unauthorized = TransferOutcome(curlCode: 22, httpStatus: 401, authenticate: "Basic realm=\"files\"")

    @Test func aURLsCredentialGoesToTheKeyringAndTheStoreGetsTheURLWithout() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession()
        let create = try d.effects(of: .createTasks(session: "s", [TaskRecord(session: "s", url: "https://ann:p%40ss@h.example/f", host: "h.example")]))
        let id = try #require(d.ledger.tasks.keys.max())
        #expect(d.ledger.tasks[id]?.url == "https://h.example/f")
        let created = try #require(d.ledger.tasks[id]?.created)
        #expect(create.contains(.keepCredential(.task(id: id, created: created, host: "h.example"), Credential(user: "ann", password: "p@ss"))))
        let started = try d.wake(.schedule)
        #expect(started.contains { if case .startTransfer(_, _, _, let c) = $0 { return c?.password == "p@ss" } else { return false } })
        // It ends: the keyring forgets it.
        let canceled = try d.effects(of: .cancel(id))
        #expect(canceled.contains(.forgetCredential(.task(id: id, created: created, host: "h.example"))))
    }

    /// What an older agent stored: a queued task's credential goes to memory and the keyring,
    /// an ended one's is dropped; both URLs are stored without it.
    @Test func credentialsStoredInURLsAreMovedOutAtTheStart() throws {
        var d = CoreDriver()
        var waiting = TaskRecord(id: 1, session: "s", url: "https://ann:pw@h.example/a", host: "h.example", created: 5)
        waiting.state = .queued
        var ended = TaskRecord(id: 2, session: "s", url: "https://bob:pw2@h.example/b", host: "h.example")
        ended.state = .completed
        let plain = TaskRecord(id: 3, session: "s", url: "https://h.example/@ann/c", host: "h.example")
        for r in [waiting, ended, plain] { d.ledger.tasks[r.id] = r }
        var state = d.ledger.startState()
        state.urlCredentials = [waiting, ended, plain]
        let effects = try d.run(.started(state))
        #expect(d.ledger.tasks[1]?.url == "https://h.example/a" && d.ledger.tasks[2]?.url == "https://h.example/b")
        #expect(effects.contains(.keepCredential(.task(id: 1, created: 5, host: "h.example"), Credential(user: "ann", password: "pw"))))
        #expect(effects.filter { if case .keepCredential = $0 { true } else { false } }.count == 1)   // not the ended one's
        #expect(!effects.contains(.store(.update(plain))))   // an @ in the path is no credential
        try d.openSession()
        let started = try d.wake(.schedule)
        #expect(started.contains { if case .startTransfer(_, _, _, let c) = $0 { return c?.password == "pw" } else { return false } })
    }

    @Test func a401AsksTheKeyringOnceBeforeTheApp() throws {
        var d = CoreDriver()
        try d.start()
        try d.openSession("s", SessionOptions())
        let id = try d.download("https://h.example/f")
        _ = try d.wake(.schedule)
        let ended = try d.run(.transferEnded(task: id, received: 0, unauthorized))
        let space = ProtectionSpace(app: "", scheme: "https", host: "h.example", port: 443, realm: "files")
        let created = try #require(d.ledger.tasks[id]?.created)
        #expect(ended.contains(.findCredential(task: id, [.task(id: id, created: created, host: "h.example"), .space(space)])))
        #expect(!ended.appended.contains { if case .challenge = $0 { return true } else { return false } })
        // The keyring has nothing: now the app is asked (the session keeps events).
        let answered = try d.run(.credentialFound(task: id, nil))
        #expect(answered.appended.contains(.challenge(scheme: "Basic", realm: "files", host: "h.example", previousFailures: 0)))
        // It answers for the session: the session's next task in that space does not ask.
        _ = try d.request(.answerChallenge(id, .credential(Credential(user: "ann", password: "pw"), persistence: .forSession)))
        let next = try d.download("https://h.example/g")
        _ = try d.wake(.schedule)
        let again = try d.run(.transferEnded(task: next, received: 0, unauthorized))
        #expect(!again.contains { if case .findCredential = $0 { return true } else { return false } })
        #expect(d.ledger.tasks[next]?.state == .queued && d.ledger.tasks[next]?.attempts == 1)
        #expect(!again.contains { if case .keepCredential = $0 { return true } else { return false } })   // memory only
    }

    /// The book alone, as a machine: events in, decisions and effects out (no core, no ledger).
    @Test func theBookDecidesAChallengeTheKeyringsAnswerAndTheEnd() throws {
        var book = CredentialBook()
        var r = TaskRecord(id: 7, session: "s", url: "https://ann:pw@h.example/f", host: "h.example", created: 3)
        let keep = book.take(fromURLOf: &r)
        let bound = try #require(book.byTask[7])
        #expect(r.url == "https://h.example/f" && bound.credential == Credential(user: "ann", password: "pw"))
        #expect(keep == [.keepCredential(.task(id: 7, created: 3, host: "h.example"), Credential(user: "ann", password: "pw"))])
        // Its own credential failed at its origin: the book does not take the 401.
        #expect(book.challenged(r, unauthorized, app: "", canChallenge: true) == .notTaken)
        // Without one, the keyring is asked once: the task's own key first (its origin asked).
        var other = TaskRecord(id: 8, session: "s", url: "https://h.example/g", host: "h.example", created: 4)
        let space = ProtectionSpace(app: "", scheme: "https", host: "h.example", port: 443, realm: "files")
        #expect(book.challenged(other, unauthorized, app: "", canChallenge: true)
            == .askKeyring([.task(id: 8, created: 4, host: "h.example"), .space(space)]))
        #expect(book.challenged(other, unauthorized, app: "", canChallenge: true) == .notTaken)
        // The keyring has one: the task uses it, and the keyring forgets it when the task ends.
        guard case .use(let found) = book.keyringAnswered(8, Credential(user: "k", password: "r")) else {
            Issue.record("the keyring's answer was not used"); return
        }
        #expect(found.origin == space.origin)
        guard case .unasked = book.keyringAnswered(8, nil) else { Issue.record("answered twice"); return }
        other.state = .completed
        #expect(book.taskEnded(other) == [.forgetCredential(.task(id: 8, created: 4, host: "h.example"))])
        #expect(book.taskEnded(other).isEmpty)
        // An app's answer kept for the session serves the session's next task at once; one kept
        // permanently goes to the keyring too; one for the task only is not kept.
        _ = book.challenged(r, TransferOutcome(curlCode: 22, httpStatus: 401, authenticate: "Basic realm=\"files\""),
                            app: "", canChallenge: true)
        let answer = Credential(user: "app", password: "x")
        #expect(book.keepAnswer(answer, .none, task: 7, session: "s").isEmpty && book.known("s", space) == nil)
        #expect(book.keepAnswer(answer, .forSession, task: 7, session: "s").isEmpty && book.known("s", space) == answer)
        #expect(book.keepAnswer(answer, .permanent, task: 7, session: "s") == [.keepCredential(.space(space), answer)])
        let next = TaskRecord(id: 9, session: "s", url: "https://h.example/h", host: "h.example")
        #expect(book.challenged(next, unauthorized, app: "", canChallenge: true)
            == .useKnown(BoundCredential(answer, origin: space.origin)))
    }
}

