import FerryBus
import FerryCore
import Foundation
import Glibc

/// Sessions as apps see them: who is connected, relaunching the app for its events,
/// authentication challenges, invalidation.
extension Agent {
    // MARK: - Connected clients

    func clientOpened(session: String, peer: String) {
        clients[session, default: []].insert(peer)
    }

    /// A bus peer left (exited, crashed, closed its connection).
    func peerVanished(_ peer: String) {
        for (session, peers) in clients where peers.contains(peer) {
            clients[session]?.remove(peer)
            if clients[session]?.isEmpty == true {
                clients[session] = nil
                considerLaunch(session)
            }
        }
    }

    // MARK: - Relaunch for events

    /// Starts the session's app if events wait for it and nobody is there to take them.
    func considerLaunch(_ session: String) {
        let config = sessionConfig(session)
        guard !config.launchCommand.isEmpty, config.keepEvents else { return }
        var policy = relaunch[session] ?? RelaunchPolicy()
        let now = MainLoop.now
        let connected = !(clients[session]?.isEmpty ?? true)
        // Runs after every burst of events: scan the queue only when nobody is listening.
        let pending = !connected && (queues[session]?.hasDurable ?? false)
        switch policy.decide(pendingEvents: pending, clientConnected: connected, now: now) {
        case .none:
            break
        case .wait(let until):
            guard relaunchTimers[session] == nil else { break }
            let ms = UInt32(clamping: max(0, (until - now + 999) / 1_000))
            relaunchTimers[session] = MainLoop.addTimer(milliseconds: ms) { [weak self] in
                self?.relaunchTimers[session] = nil
                self?.considerLaunch(session)
                return false
            }
        case .launch:
            do {
                let pid = try Launcher.launch(config.launchCommand, session: session, log: log) { [weak self] status in
                    self?.launchedAppExited(session: session, status: status)
                }
                policy.launched(now: now)
                log.info("session \(session): launched \(config.launchCommand[0]) (pid \(pid)) for its events")
            } catch {
                log.error("session \(session): \(error)")
                policy.launched(now: now)
                policy.exited(now: now, pendingEvents: true)
                relaunch[session] = policy
                considerLaunch(session)   // arms the backoff timer
                return
            }
        }
        relaunch[session] = policy
    }

    private func launchedAppExited(session: String, status: Int32) {
        var policy = relaunch[session] ?? RelaunchPolicy()
        let pending = queues[session]?.hasDurable ?? false
        policy.exited(now: MainLoop.now, pendingEvents: pending)
        relaunch[session] = policy
        if let note = policy.describe(now: MainLoop.now) {
            log.warning("session \(session): launched app exited (status \(status)) with events pending: \(note)")
        } else {
            log.info("session \(session): launched app exited (status \(status))")
        }
        considerLaunch(session)
    }

    func finishedHandlingEvents(session: String) throws {
        guard try store.session(session) != nil else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        let now = MainLoop.now
        relaunch[session, default: RelaunchPolicy()].finishedEvents(now: now)
        try store.setFinishedEvents(session: session, at: now)
        log.info("session \(session): the app finished handling its events")
    }

    func sessionInfo(_ session: String) throws -> [String: Value] {
        guard let config = try store.session(session) else {
            throw FerryError(.noSuchSession, "no session '\(session)'")
        }
        var c: [String: Value] = [
            "launch-command": .strings(config.launchCommand), "discretionary": .bool(config.discretionary),
            "allow-metered": .bool(config.allowMetered), "per-host-limit": .uint32(UInt32(clamping: config.perHostLimit)),
            "request-timeout": .uint32(UInt32(clamping: config.requestTimeout)),
            "resource-timeout": .uint32(UInt32(clamping: config.resourceTimeout)),
            "popups": .bool(config.popups), "keep-events": .bool(config.keepEvents)]
        if let d = config.defaultDirectory { c["default-directory"] = .string(d) }
        return ["identifier": .string(session), "configuration": .dict(c),
                "clients": .uint32(UInt32(clients[session]?.count ?? 0)),
                "pending-events": .uint32(UInt32(queues[session]?.count ?? 0)),
                "latest-seq": .uint64(queues[session]?.lastSeq ?? 0),
                "invalidating": .bool(config.invalidating),
                "relaunch": .string(relaunch[session]?.describe(now: MainLoop.now) ?? ""),
                "finished-events": .int64(try store.finishedEvents(session: session))]
    }

    // MARK: - Challenges

    func answerChallenge(_ id: Int64, _ answer: [String: Value]) throws {
        for key in answer.keys where !["user", "password", "action"].contains(key) {
            throw FerryError(.invalidArgument, "unknown answer key '\(key)'")
        }
        let choice: TaskMachine.ChallengeAnswer
        if let action = answer["action"] {
            switch try Self.string(action, "action") {
            case "reject": choice = .reject
            case "cancel": choice = .cancel
            case let other: throw FerryError(.invalidArgument, "action must be reject or cancel, not '\(other.prefix(32))'")
            }
        } else {
            guard let user = answer["user"]?.stringValue, let password = answer["password"]?.stringValue else {
                throw FerryError(.invalidArgument, "give user and password (strings), or action")
            }
            credentials[id] = Credential(user: user, password: password)
            choice = .useCredential
        }
        do {
            try withMachine(id) { try $0.answerChallenge(choice, now: MainLoop.now) }
        } catch {
            if choice == .useCredential { credentials[id] = nil }
            throw error
        }
        if choice != .useCredential { credentials[id] = nil }
        scheduleSoon()
    }

    // MARK: - Invalidation

    func invalidateSession(_ session: String, cancelTasks: Bool) throws {
        guard var config = try store.session(session) else {
            throw FerryError(.noSuchSession, "no session '\(session)'")
        }
        guard !config.invalid, !config.invalidating else { return }
        config.invalidating = true
        try store.saveSession(session, config, now: MainLoop.now)
        sessions[session] = config
        if cancelTasks {
            for r in try store.unfinishedTasks(session: session) {
                _ = try? withMachine(r.id) { try $0.cancel(keepPartial: false, now: MainLoop.now) }
            }
        }
        checkInvalidation(session)
    }

    /// An invalidating session with no unfinished task gets its last event.
    func checkInvalidation(_ session: String) {
        guard sessions[session]?.invalidating == true,
              (try? store.unfinishedTasks(session: session).isEmpty) == true else { return }
        var config = sessions[session]!
        config.invalidating = false
        config.invalid = true
        let seqBefore = queues[session]?.lastSeq ?? 0
        do {
            // The session's new state and its last event commit together.
            try store.batch {
                try store.saveSession(session, config, now: MainLoop.now)
                try emit(session: session, task: 0, .invalidated(error: nil))
            }
            sessions[session] = config
        } catch {
            queues[session]?.rollBack(after: seqBefore)   // looked at again after the next event
            log.error("session \(session): cannot record its invalidation: \(error)")
        }
    }

    // MARK: - Resume data

    /// Resume data for a task that ended resumable (failed or canceled with its bytes kept).
    func resumeData(for id: Int64) -> [UInt8]? {
        guard let r = try? store.task(id), r.kind == .download, r.state == .failed || r.state == .canceled,
              fileSize(stagingPath(id)) > 0 else { return nil }
        return resumeBlob(r)
    }
}
