/// Credentials beyond a task's own answer: the one in its URL (kept in the keyring, not the
/// store), those an app asked to keep for its session or permanently (the keyring). The
/// keyring is the shell's to ask; the core decides when, and what its answer means.
extension AgentCore {
    /// A new task's URL carried user:password: the store gets the URL without it (the
    /// credential: memory and the keyring, `CredentialBook.take`).
    mutating func takeCredential(fromURLOf r: inout TaskRecord) {
        guard let (bound, keep) = credentials.take(fromURLOf: &r) else { return }
        tasks.credentials[r.id] = bound
        out.append(keep)
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

    /// A 401: a credential kept for the session, or the keyring, may answer it before the app
    /// hears of it (`CredentialBook.challenged` decides). False: the 401 is not taken here.
    mutating func tryRememberedCredential(
        _ r: TaskRecord, received: Int64, _ outcome: TransferOutcome,
        canChallenge: Bool, _ ledger: AgentLedger
    ) -> Bool {
        let step = credentials.challenged(
            r, outcome, app: app(ofSession: r.session), holding: tasks.credentials[r.id], canChallenge: canChallenge)
        switch step {
        case .notTaken:
            return false
        case .useKnown(let bound):
            tasks.credentials[r.id] = bound
            _ = try? withMachine(r.id, ledger) { m, now in
                _ = m.progressed(received: received, now: now)
                _ = m.awaitRememberedCredential(now: now)
                return m.rememberedCredentialFound(now: now)
            }
        case .askKeyring(let keys):
            _ = try? withMachine(r.id, ledger) { m, now in
                _ = m.progressed(received: received, now: now)
                return m.awaitRememberedCredential(now: now)
            }
            out.append(.findCredential(task: r.id, keys))
        }
        return true
    }

    /// The keyring's answer for a task that got a 401.
    mutating func credentialFound(_ id: Int64, _ credential: Credential?, _ ledger: AgentLedger) {
        switch credentials.keyringAnswered(id, credential) {
        case .unasked:
            return
        case .use(let bound):
            tasks.credentials[id] = bound
            _ = try? withMachine(id, ledger) { m, now in m.rememberedCredentialFound(now: now) }
        case .none(let pending):
            let backoff = settings.backoff
            _ = try? withMachine(id, ledger) { m, now in
                m.noRememberedCredential(
                    pending.outcome, backoff: backoff, resourceDeadline: nil, now: now,
                    canChallenge: pending.canChallenge)
            }
        }
        wake(.schedule)
    }

    /// An app answered a challenge with a credential: kept as long as it asked.
    mutating func keepAnswer(
        _ c: Credential, _ persistence: CredentialPersistence, task id: Int64, _ ledger: AgentLedger
    ) {
        out += credentials.keepAnswer(
            c, persistence, task: id,
            session: tasks.machines[id]?.record.session ?? (try? ledger.task(id))?.session)
    }

    /// A task ended: its credential goes from memory and, if the URL had one, from the keyring.
    mutating func forgetCredential(ofEnded r: TaskRecord) {
        tasks.credentials[r.id] = nil  // an app's password lives no longer than its task
        tasks.proxyCredentials[r.id] = nil
        tasks.proxyAsked.remove(r.id)
        out += credentials.taskEnded(r)
    }
}
