import FerryBus
import FerryCore
import Glibc
import Logging

/// Owns dev.ferry.Agent1 on the session bus and answers the interface compiled in from
/// desktop/dev.ferry.Agent1.xml (`BusObjects`: which object a call is for, its signature checked
/// against the XML, so a malformed call is refused before it reaches the agent with
/// org.freedesktop.DBus.Error.InvalidArgs). The connection is sd-bus's (`BusConnection`).
public final class BusService {
    /// `busClosed`: the bus went away under a running agent (the desktop session ended).
    public enum Outcome { case acquired, nameTaken, noBus, busClosed }

    let agent: Agent
    let log: Logger
    private(set) var connection: BusConnection?
    private let objects: BusObjects
    let identity = CallerIdentity()
    /// Every reply and signal leaves through the agent's outbox, in order.
    var outbox: BusOutbox { agent.outbox }
    private var onOutcome: (Outcome) -> Void = { _ in }
    private var acquired = false

    public init(agent: Agent, logger: Logger) throws {
        self.agent = agent
        self.log = logger
        objects = try BusObjects()
        agent.onEventsAvailable = { [unowned self] session, seq, app in
            self.emit(.eventsAvailable, [.string(session), .uint64(seq)], about: app)
        }
        agent.onLauncherChanged = { [unowned self] in self.publishLauncher() }
        agent.onTasksRemoved = { [unowned self] ids, app in
            self.emit(.tasksRemoved, [.array(ids.map { .uint64(UInt64($0)) }, elementType: "t")], about: app)
        }
        agent.onTasksProgressed = { [unowned self] moved, app in
            let items = moved.map { Value.tuple([.uint64(UInt64($0.task)), .int64($0.received), .int64($0.expected)]) }
            self.emit(.tasksProgressed, [.array(items, elementType: "(txx)")], about: app)
        }
        agent.onTaskChanged = { [unowned self] id, state, app in
            self.emit(.taskChanged, [.uint64(UInt64(id)), .string(state.rawValue)], about: app)
        }
    }

    private static let busDaemon = "org.freedesktop.DBus"
    private static let busPath = "/org/freedesktop/DBus"

    /// Connects and asks the bus for the name; `outcome` is called from the loop.
    public func own(replace: Bool, outcome: @escaping (Outcome) -> Void) {
        onOutcome = outcome
        guard let c = try? BusConnection() else {
            MainLoop.idle { outcome(.noBus) }
            return
        }
        connection = c
        c.onMessage = { [unowned self] in self.received($0) }
        c.onClose = { [unowned self] in self.onOutcome(self.acquired ? .busClosed : .noBus) }
        c.attach()
        // Every name that leaves the bus (clients' connections; a dock appearing).
        c.call(Self.busDaemon, Self.busPath, Self.busDaemon, "AddMatch",
               [.string("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")],
               timeoutMilliseconds: 25_000) { _ in }
        // DBUS_NAME_FLAG_ALLOW_REPLACEMENT | DO_NOT_QUEUE, and REPLACE_EXISTING with --replace.
        let flags: UInt32 = 1 | 4 | (replace ? 2 : 0)
        c.call(Self.busDaemon, Self.busPath, Self.busDaemon, "RequestName", [.string(BusNames.agent), .uint32(flags)],
               timeoutMilliseconds: 25_000) { [unowned self] result in
            // 1: the primary owner now; 4: already was. 3: another owns it (not queued).
            guard case .success(let reply) = result, let code = reply.first?.uint64Value, code == 1 || code == 4 else {
                if case .failure(let e) = result { log.error("cannot own \(BusNames.agent): \(e)") }
                onOutcome(c.isClosed ? .noBus : .nameTaken)
                return
            }
            acquired = true
            onOutcome(.acquired)
            LauncherEntry.dockIsThere(c) { [weak self] in self?.publishLauncher() }
            AppSpawner.warmSessionBus()
        }
    }

    public func flush() {
        outbox.drain()
        connection?.flush()
    }

    /// A method call or a signal, on the loop.
    private func received(_ message: BusMessage) {
        switch message.kind {
        case .methodCall: methodCall(message)
        case .signal where message.sender == Self.busDaemon && message.interface == Self.busDaemon:
            let args = message.values()
            switch message.member {
            case "NameOwnerChanged":
                guard args.count == 3, let name = args[0].stringValue, let owner = args[2].stringValue else { return }
                if name == LauncherEntry.dock, !owner.isEmpty {
                    publishLauncher()   // a dock appeared: it learns the badge at once
                } else if name.hasPrefix(":"), owner.isEmpty {
                    // Clients that leave the bus are no longer connected to their sessions.
                    identity.forget(name)
                    agent.feed(.peerLeft(name))
                }
            case "NameLost" where args.first?.stringValue == BusNames.agent && acquired:
                acquired = false
                onOutcome(.nameTaken)   // replaced by `ferryd --replace`
            default: break
            }
        default: break
        }
    }

    private func methodCall(_ message: BusMessage) {
        guard let c = connection else { return }
        let call = c.retain(message)
        switch objects.route(message, launcherProperties: { [.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(self.agent))] }) {
        case .answer(let values): outbox.reply { c.reply(to: call, values) }
        case .property(let value): outbox.reply { c.reply(to: call, variant: value) }
        case .refuse(let name, let text): outbox.reply { c.replyError(to: call, name: name, message: text) }
        case .agentMethod(let name):
            let args = message.values()
            let from = message.sender ?? ""
            // Who calls decides what it may do: the first call of a connection waits for the answer.
            identity.identify(from, on: c) { [self] caller in
                guard let caller else {
                    fail(call, FerryError(.accessDenied, "cannot tell which app is calling (its process is gone or unreadable)"))
                    return
                }
                answer(name, args, sender: from, caller: caller, call)
            }
        }
    }

    private func answer(_ name: String, _ args: [Value], sender: String, caller: Caller, _ call: BusCall) {
        if name == AgentMethod.createUploadFromFd.rawValue {
            uploadFromDescriptor(args, caller: caller, call)   // answers once the copy is made
            return
        }
        reply(call, name) { try dispatch(name, args, sender: sender, caller: caller) }
    }

    /// Sends `body`'s values, or its error as the D-Bus error it names.
    func reply(_ call: BusCall, _ name: String, _ body: () throws -> [Value]) {
        guard let c = connection else { return }
        do {
            let values = try body()
            outbox.reply { c.reply(to: call, values) }
        } catch let e as FerryError {
            fail(call, e)
        } catch {
            log.error("\(name) failed: \(error)")
            fail(call, FerryError(.failed, "internal error: \(error)"))
        }
    }

    /// Answers a call with a dev.ferry.Error (through the outbox, after what was queued before).
    func fail(_ call: BusCall, _ e: FerryError) {
        guard let c = connection else { return }
        let name = e.dbusName, message = e.message
        outbox.reply { c.replyError(to: call, name: name, message: message) }
    }

    /// One line per method: unpack the (already type-checked) arguments into a request, hand it
    /// to the agent, pack the reply.
    func dispatch(_ name: String, _ a: [Value], sender: String, caller: Caller = .host) throws -> [Value] {
        func s(_ i: Int) -> String { a[i].stringValue ?? "" }
        func t(_ i: Int) -> Int64 { a[i].int64Value ?? 0 }
        func u(_ i: Int) -> Int { Int(a[i].int64Value ?? 0) }
        func d(_ i: Int) -> [String: Value] { a[i].dictValue ?? [:] }
        guard let method = AgentMethod(rawValue: name) else { throw FerryError(.invalidArgument, "unknown method \(name)") }
        let request: AgentRequest
        switch method {
        case .openSession:
            try AgentCore.validateSessionIdentifier(s(0))
            let options = try RequestDecoder.sessionOptions(d(1))
            // Finished files wait here for the app (it moves them during didFinishDownloadingTo).
            let inbox: String
            if case .sandboxed(let app) = caller { inbox = AgentCore.inbox(appHome: app.home, session: s(0)) } else {
                inbox = AgentCore.inbox(stateDirectory: agent.settings.stateDirectory, session: s(0))
            }
            guard Paths.mkdirAll(inbox, mode: 0o700) else { throw FerryError(.failed, "cannot create the session's inbox \(inbox)") }
            request = .openSession(s(0), options, peer: sender)
        case .createUpload: request = .createTasks(session: s(0), [try RequestDecoder.upload(url: s(1), file: s(2), d(3))])
        case .createUploadFromFd:
            throw FerryError(.invalidArgument, "CreateUploadFromFd needs its descriptor (BusService.uploadFromDescriptor)")
        case .answerChallenge: request = .answerChallenge(t(0), try ChallengeReply(bus: d(1)))
        case .finishedHandlingEvents: request = .finishedHandlingEvents(s(0))
        case .invalidateSession: request = .invalidateSession(s(0), cancelTasks: a[1].boolValue ?? false)
        case .getSession: request = .getSession(s(0))
        case .createDownload: request = .createTasks(session: s(0), [try RequestDecoder.download(url: s(1), d(2))])
        case .createDownloads:
            let requests: [(String, [String: Value])] = (a[1].arrayValue ?? []).map { item in
                let pair = item.tupleValue ?? []
                return (pair.first?.stringValue ?? "", pair.count > 1 ? pair[1].dictValue ?? [:] : [:])
            }
            guard !requests.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
            request = .createTasks(session: s(0), try RequestDecoder.downloads(requests))
        case .createDownloadFromResumeData:
            let data = try ResumeData.decode(a[1].bytesValue ?? [])
            let draft = try RequestDecoder.download(url: data.url, d(2))
            request = .createFromResumeData(session: s(0), data, draft, destinationGiven: draft.directory != nil || draft.output != nil)
        case .listTasks, .listTaskRows: request = .listTasks(session: s(0), after: t(1), limit: u(2))
        case .listTaskRowsSection:
            let active: Bool
            switch s(1) {
            case "active": active = true
            case "ended": active = false
            default: throw FerryError(.invalidArgument, "unknown section \"\(s(1))\" (active or ended)")
            }
            request = .listSection(session: s(0), active: active, offset: Int(u(2)), limit: u(3))
        case .getTask: request = .getTask(t(0))
        case .pause: request = .pause(t(0))
        case .resume: request = .resume(t(0))
        case .cancel: request = .cancel(t(0))
        case .cancelProducingResumeData: request = .cancelProducingResumeData(t(0))
        case .fetchEvents: request = .fetchEvents(session: s(0), after: a[1].uint64Value ?? 0, limit: u(2))
        case .acknowledgeEvents: request = .acknowledgeEvents(session: s(0), upTo: a[1].uint64Value ?? 0)
        case .resetBadge: request = .resetBadge
        case .removeTasks: request = .removeTasks((a[0].arrayValue ?? []).compactMap(\.int64Value))
        case .clearFinished: request = .clearFinished(session: s(0))
        case .pauseAll: request = .pauseAll(session: s(0))
        case .resumeAll: request = .resumeAll(session: s(0))
        case .getStatus: request = .status
        }
        guard case .sandboxed(let app) = caller else { return encode(try agent.request(request), method: method, caller: caller) }
        try SandboxPaths.check(request, app)
        return encode(try agent.request(.sandboxed(app, request)), method: method, caller: caller)
    }

    /// A reply as the interface XML says it goes out.
    func encode(_ reply: AgentReply, method: AgentMethod, caller: Caller) -> [Value] {
        func info(_ r: TaskRecord) -> TaskInfo { TaskInfo(r, app: agent.app(ofSession: r.session)) }
        switch reply {
        case .none: return []
        case .session(let id, let created, let latest, let inbox):
            return [.dict(OpenedSession(identifier: id, created: created, latestSeq: latest, inbox: inbox).bus)]
        case .taskIDs(let ids):
            if method == .createDownloads { return [.array(ids.map { .uint64(UInt64($0)) }, elementType: "t")] }
            return [.uint64(UInt64(ids[0]))]
        case .tasks(let list) where method == .listTaskRows || method == .listTaskRowsSection:
            return [.array(list.map { info($0).row }, elementType: TaskInfo.rowType)]
        case .tasks(let list): return [.array(list.map { .dict(info($0).dictionary) }, elementType: "a{sv}")]
        case .task(let r): return [.dict(info(r).dictionary)]
        case .resumeData(let blob): return [.bytes(blob)]
        case .events(let events, let blobs):
            return [.array(events.map { FetchedEvent($0, resumeData: blobs[$0.task]).bus }, elementType: "(tsta{sv})")]
        case .count(let n): return [.uint32(UInt32(clamping: n))]
        case .status(let counts, let running, let badge):
            var tasks: [TaskState: Int] = [:]
            for (k, v) in counts { if let s = TaskState(rawValue: k) { tasks[s] = v } }
            // A sandboxed app learns nothing of the host's file system.
            let store = caller == .host ? agent.storePath : ""
            return [.dict(AgentStatus(version: FerryRelease.version, store: store, pid: Int64(getpid()),
                                      tasks: tasks, running: running, badge: badge).bus)]
        case .sessionInfo(let info): return [.dict(info.bus)]
        }
    }

    /// The badge for docks and panels: com.canonical.Unity.LauncherEntry.Update for ferry.desktop.
    func publishLauncher() {
        guard let c = connection else { return }
        let body: [Value] = [.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(agent))]
        outbox.send { c.signal(path: LauncherEntry.path, interface: LauncherEntry.interface, member: "Update", body) }
    }

    /// The host's signals are broadcast (scripts listen with plain match rules). A sandboxed
    /// app's go, addressed, only to its own connections and to the host's programs that have
    /// called the agent: other sandboxes hear nothing of them.
    func emit(_ signal: AgentSignal, _ args: [Value], about app: String) {
        assert(!CurlMulti.insideCurl, "a D-Bus signal inside a curl callback")
        guard let c = connection else { return }
        let destinations: [String?] = app.isEmpty ? [nil] : identity.peers(entitledTo: app)
        let name = signal.rawValue
        outbox.send {
            for destination in destinations {
                c.signal(path: BusNames.path, interface: BusNames.interface, member: name, args, destination: destination)
            }
        }
    }
}
