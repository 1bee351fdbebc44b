import FerryBus
import FerryCore

/// Where claiming dev.ferry.Agent1 stands.
enum NameClaim {
    case asking
    /// Queued behind the owner, asking whether it still answers.
    case pinging
    /// Queued behind an owner that does not answer (exiting): until the timer gives up.
    case waiting(timer: UInt32)
    case owned
    case givenUp
}

/// Claiming the agent's name. An agent started right after the last one exited (a restart, an
/// upgrade) may find the old connection still owning the name for a moment: it queues for the
/// name and, if the owner does not answer a Ping (its loop has stopped: it is going away), waits
/// up to 10 s for it. A live owner answers, and the new agent leaves as before.
extension BusService {
    static let nameWaitMilliseconds: UInt32 = 10_000

    func claimName(on c: BusConnection, replace: Bool) {
        // DBUS_NAME_FLAG_ALLOW_REPLACEMENT, and REPLACE_EXISTING with --replace; queued otherwise.
        let flags: UInt32 = 1 | (replace ? 2 : 0)
        c.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
            [.string(BusNames.agent), .uint32(flags)], timeoutMilliseconds: 25_000
        ) { [unowned self] result in
            // 1: the primary owner now; 4: already was; 2: queued behind the owner.
            guard case .success(let reply) = result, let code = BusReader.read(reply, "RequestName", { try $0.count() })
            else {
                if case .failure(let e) = result { log.error("cannot own \(BusNames.agent): \(e)") }
                return giveUp(c)
            }
            switch code {
            case 1, 4: nameAcquired()
            case 2: askOwner(c)
            default: giveUp(c)
            }
        }
    }

    /// The bus made this agent the owner (at once, or from the queue).
    func nameAcquired() {
        switch claim {
        case .owned, .givenUp: return
        case .waiting(let timer): MainLoop.cancel(timer)
        case .asking, .pinging: break
        }
        claim = .owned
        acquired = true
        onOutcome(.acquired)
        guard let c = connection else { return }
        LauncherEntry.dockIsThere(c) { [weak self] in self?.publishLauncher() }
        AppSpawner.warmSessionBus()
    }

    private func askOwner(_ c: BusConnection) {
        guard case .asking = claim else { return }
        claim = .pinging
        c.call(BusNames.agent, BusNames.path, "org.freedesktop.DBus.Peer", "Ping", [], timeoutMilliseconds: 1_000) {
            [unowned self] result in
            guard case .pinging = claim else { return }  // the name came meanwhile
            if case .success = result { return giveUp(c) }  // a live agent
            let seconds = Self.nameWaitMilliseconds / 1000
            log.notice(
                "the agent owning \(BusNames.agent) does not answer (it is exiting?): waiting \(seconds) s for its name"
            )
            claim = .waiting(
                timer: MainLoop.addTimer(milliseconds: Self.nameWaitMilliseconds) { [unowned self] in
                    if case .waiting = claim { giveUp(c) }
                    return false
                })
        }
    }

    private func giveUp(_ c: BusConnection) {
        claim = .givenUp
        // Out of the queue: a live agent's name must not pass to this one later.
        c.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReleaseName",
            [.string(BusNames.agent)], timeoutMilliseconds: 1_000
        ) { _ in }
        onOutcome(c.isClosed ? .noBus : .nameTaken)
    }
}
