/// Credentials beyond a task's own answer: the one in its URL (kept in the keyring, not the
/// store), those an app asked to keep for its session or permanently (the keyring). The
/// keyring is the shell's to ask; the core decides when, and what its answer means.
extension AgentCore {
    /// A new task's URL carried user:password: the store gets the URL without it; the
    /// credential lives in memory and in the keyring until the task ends.
    mutating func takeCredential(fromURLOf r: inout TaskRecord) {
        let (url, credential) = DownloadURL.splitCredential(r.url)
        guard let credential else { return }
        r.url = url
        tasks.credentials[r.id] = BoundCredential(credential, origin: Origin(url))
        credentials.inKeyring.insert(r.id)
        out.append(.keepCredential(.task(id: r.id, created: r.created, host: r.host), credential))
    }

    /// Tasks an older agent stored with user:password in the URL: the store keeps the URL
    /// without it; a task still to run gets it in memory and the keyring as a new task would.
    mutating func moveCredentials(outOf records: [TaskRecord]) {
        for var r in records {
            if r.state.isFinal {
                let (url, credential) = DownloadURL.splitCredential(r.url)
                guard credential != nil else { continue }
                r.url = url
            } else {
                let url = r.url
                takeCredential(fromURLOf: &r)
                guard r.url != url else { continue }
            }
            out.append(.store(.update(r)))
        }
    }

    /// A 401 for a task without a credential of its own: one kept for its session is tried at
    /// once, else the keyring is asked (once a run); the app hears of the challenge only when
    /// neither has one. False: the 401 is not taken here.
    mutating func tryRememberedCredential(
        _ r: TaskRecord, received: Int64, _ outcome: TransferOutcome,
        canChallenge: Bool, _ ledger: AgentLedger
    ) -> Bool {
        guard outcome.httpStatus == 401 else { return false }
        let realm = TaskMachine.parseChallenge(outcome.authenticate).1
        // The space of the origin that asked: an upload resource or a redirect may be elsewhere.
        let space = ProtectionSpace(app: app(ofSession: r.session), url: outcome.effectiveURL ?? r.url, realm: realm)
        credentials.challenged[r.id] = space
        guard tasks.credentials[r.id]?.origin != space.origin, credentials.asked.insert(r.id).inserted else {
            return false
        }
        if let known = credentials.known(r.session, space) {
            tasks.credentials[r.id] = BoundCredential(known, origin: space.origin)
            _ = try? withMachine(r.id, ledger) { m, now in
                _ = m.progressed(received: received, now: now)
                _ = m.awaitRememberedCredential(now: now)
                return m.rememberedCredentialFound(now: now)
            }
            return true
        }
        credentials.waiting[r.id] = CredentialBook.PendingAnswer(outcome: outcome, canChallenge: canChallenge)
        _ = try? withMachine(r.id, ledger) { m, now in
            _ = m.progressed(received: received, now: now)
            return m.awaitRememberedCredential(now: now)
        }
        // The task's own (its URL's) only where its origin asked.
        let own: [CredentialKey] =
            space.origin == Origin(r.url) ? [.task(id: r.id, created: r.created, host: r.host)] : []
        out.append(.findCredential(task: r.id, own + [.space(space)]))
        return true
    }

    /// The keyring's answer for a task that got a 401.
    mutating func credentialFound(_ id: Int64, _ credential: Credential?, _ ledger: AgentLedger) {
        guard let pending = credentials.waiting.removeValue(forKey: id) else { return }
        if let credential {
            tasks.credentials[id] = BoundCredential(credential, origin: credentials.challenged[id]?.origin)
            credentials.inKeyring.insert(id)  // it may be the task's own (from its URL): forgotten when it ends
            _ = try? withMachine(id, ledger) { m, now in m.rememberedCredentialFound(now: now) }
        } else {
            let backoff = settings.backoff
            _ = try? withMachine(id, ledger) { m, now in
                m.noRememberedCredential(
                    pending.outcome, backoff: backoff, resourceDeadline: nil, now: now,
                    canChallenge: pending.canChallenge)
            }
        }
        wake(.schedule)
    }

    /// An app answered a challenge with a credential: kept as long as it asked, for the
    /// protection space the task was challenged for (unknown after a restart: then the task's only).
    mutating func keepAnswer(
        _ c: Credential, _ persistence: CredentialPersistence, task id: Int64, _ ledger: AgentLedger
    ) {
        guard persistence != .none, let space = credentials.challenged[id],
            let session = tasks.machines[id]?.record.session ?? (try? ledger.task(id))?.session
        else { return }
        credentials.keep(c, session: session, space)
        if persistence == .permanent { out.append(.keepCredential(.space(space), c)) }
    }

    /// A task ended: its credential goes from memory and, if the URL had one, from the keyring.
    mutating func forgetCredential(ofEnded r: TaskRecord) {
        tasks.credentials[r.id] = nil  // an app's password lives no longer than its task
        tasks.proxyCredentials[r.id] = nil
        tasks.proxyAsked.remove(r.id)
        if credentials.taskEnded(r.id) {
            out.append(.forgetCredential(.task(id: r.id, created: r.created, host: r.host)))
        }
    }
}
