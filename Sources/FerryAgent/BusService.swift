import CFerryShim
import CGLib
import FerryBus
import FerryCore
import Glibc
import Logging

/// Owns dev.ferry.Agent1 on the session bus and exports the interface compiled in from
/// desktop/dev.ferry.Agent1.xml. GDBus checks every call's signature against that XML, so a
/// malformed call is refused before it reaches the agent (org.freedesktop.DBus.Error.InvalidArgs).
public final class BusService {
    /// `busClosed`: the bus went away under a running agent (the desktop session ended).
    public enum Outcome { case acquired, nameTaken, noBus, busClosed }

    let agent: Agent
    let log: Logger
    var connection: OpaquePointer?
    private var ownerID: UInt32 = 0
    private var registrationID: UInt32 = 0
    let identity = CallerIdentity()
    /// Every reply and signal leaves through the agent's outbox, in order.
    var outbox: BusOutbox { agent.outbox }
    private let nodeInfo: UnsafeMutablePointer<GDBusNodeInfo>
    private var onOutcome: (Outcome) -> Void = { _ in }

    public init(agent: Agent, logger: Logger) throws {
        self.agent = agent
        self.log = logger
        var error: UnsafeMutablePointer<GError>?
        guard let info = g_dbus_node_info_new_for_xml(ferry_agent_interface_xml(), &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "?"
            throw FerryError(.failed, "the compiled-in interface XML does not parse: \(message)")
        }
        nodeInfo = info
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

    /// Asks the bus for the name; `outcome` is called from the loop.
    public func own(replace: Bool, outcome: @escaping (Outcome) -> Void) {
        onOutcome = outcome
        var flags = G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT.rawValue | G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE.rawValue
        if replace { flags |= G_BUS_NAME_OWNER_FLAGS_REPLACE.rawValue }
        let me = Unmanaged.passUnretained(self).toOpaque()
        ownerID = g_bus_own_name(G_BUS_TYPE_SESSION, BusNames.agent, GBusNameOwnerFlags(flags),
                                 BusService.busAcquired, BusService.nameAcquired, BusService.nameLost, me, nil)
    }

    public func flush() {
        outbox.drain()
        if let c = connection, g_dbus_connection_is_closed(c) == 0 { g_dbus_connection_flush_sync(c, nil, nil) }
    }

    private static let busAcquired: GBusAcquiredCallback = { conn, _, user in
        let me = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
        g_object_ref(UnsafeMutableRawPointer(conn))   // kept valid after the bus goes (flush checks it)
        me.connection = conn
        // GLib would raise SIGTERM when the bus closes; the agent says why and saves state itself.
        g_dbus_connection_set_exit_on_close(conn, 0)
        me.register(conn!)
    }
    private static let nameAcquired: GBusNameAcquiredCallback = { _, _, user in
        Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue().onOutcome(.acquired)
    }
    private static let nameLost: GBusNameLostCallback = { conn, _, user in
        let me = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
        // GLib passes no connection both when there never was a bus and when it closed.
        if conn == nil || g_dbus_connection_is_closed(conn) != 0 {
            me.onOutcome(me.connection == nil ? .noBus : .busClosed)
        } else {
            me.onOutcome(.nameTaken)
        }
    }

    private func register(_ conn: OpaquePointer) {
        var vtable = GDBusInterfaceVTable()
        vtable.method_call = BusService.methodCall
        vtable.get_property = BusService.getProperty
        let iface = g_dbus_node_info_lookup_interface(nodeInfo, BusNames.interface)
        var error: UnsafeMutablePointer<GError>?
        registrationID = g_dbus_connection_register_object(conn, BusNames.path, iface, &vtable,
                                                           Unmanaged.passUnretained(self).toOpaque(), nil, &error)
        LauncherEntry.register(conn, service: self)
        watchPeers(conn)
        if registrationID == 0 {
            log.critical("cannot export \(BusNames.path): \(error.map { String(cString: $0.pointee.message) } ?? "?")")
        }
    }

    private static let getProperty: GDBusInterfaceGetPropertyFunc = { _, _, _, _, name, _, _ in
        guard let name, String(cString: name) == "Version" else { return nil }
        return Value.string(FerryRelease.version).makeGVariant()
    }

    private static let methodCall: GDBusInterfaceMethodCallFunc = { conn, sender, _, _, method, params, invocation, user in
        let me = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
        let name = String(cString: method!)
        let args = params.map { Value($0).tupleValue ?? [] } ?? []
        let from = sender.map { String(cString: $0) } ?? ""
        // Who calls decides what it may do: the first call of a connection waits for the answer.
        me.identity.identify(from, on: conn!) { caller in
            guard let caller else {
                me.fail(invocation, FerryError(.accessDenied, "cannot tell which app is calling (its process is gone or unreadable)"))
                return
            }
            me.answer(name, args, sender: from, caller: caller, invocation)
        }
    }

    private func answer(_ name: String, _ args: [Value], sender: String, caller: Caller, _ invocation: OpaquePointer?) {
        if name == AgentMethod.createUploadFromFd.rawValue {
            uploadFromDescriptor(args, caller: caller, invocation)   // answers once the copy is made
            return
        }
        reply(invocation, name) { try dispatch(name, args, sender: sender, caller: caller) }
    }

    /// Sends `body`'s values, or its error as the D-Bus error it names.
    func reply(_ invocation: OpaquePointer?, _ name: String, _ body: () throws -> [Value]) {
        do {
            let values = try body()
            let call = GPointer(invocation)
            outbox.reply { g_dbus_method_invocation_return_value(call.pointer, Value.tuple(values).makeGVariant()) }
        } catch let e as FerryError {
            fail(invocation, e)
        } catch {
            log.error("\(name) failed: \(error)")
            fail(invocation, FerryError(.failed, "internal error: \(error)"))
        }
    }

    /// Answers a call with a dev.ferry.Error (through the outbox, after what was queued before).
    func fail(_ invocation: OpaquePointer?, _ e: FerryError) {
        let call = GPointer(invocation), name = e.dbusName, message = e.message
        outbox.reply { g_dbus_method_invocation_return_dbus_error(call.pointer, name, message) }
    }

    /// A GDBus object (a method invocation, the connection) used on the outbox's thread: GDBus
    /// may be called from any thread, and each invocation is answered exactly once.
    struct GPointer: @unchecked Sendable {
        let pointer: OpaquePointer?
        init(_ pointer: OpaquePointer?) { self.pointer = pointer }
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

    /// Clients that leave the bus are no longer connected to their sessions.
    private func watchPeers(_ conn: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        g_dbus_connection_signal_subscribe(conn, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                           "/org/freedesktop/DBus", nil, G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, _, params, user in
            let args = params.map { Value($0).tupleValue ?? [] } ?? []
            guard args.count == 3, let name = args[0].stringValue, name.hasPrefix(":"),
                  args[2].stringValue == "" else { return }
            let me = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
            me.identity.forget(name)
            me.agent.feed(.peerLeft(name))
        }, me, nil)
    }

    /// The badge for docks and panels: com.canonical.Unity.LauncherEntry.Update for ferry.desktop.
    func publishLauncher() {
        guard let c = connection else { return }
        let body = Value.tuple([.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(agent))]), conn = GPointer(c)
        outbox.send { g_dbus_connection_emit_signal(conn.pointer, nil, LauncherEntry.path, LauncherEntry.interface, "Update", body.makeGVariant(), nil) }
    }

    /// The host's signals are broadcast (scripts listen with plain match rules). A sandboxed
    /// app's go, addressed, only to its own connections and to the host's programs that have
    /// called the agent: other sandboxes hear nothing of them.
    func emit(_ signal: AgentSignal, _ args: [Value], about app: String) {
        assert(!CurlMulti.insideCurl, "a D-Bus signal inside a curl callback")
        guard let c = connection else { return }
        let destinations: [String?] = app.isEmpty ? [nil] : identity.peers(entitledTo: app)
        let conn = GPointer(c), name = signal.rawValue
        outbox.send {
            let body = g_variant_ref_sink(Value.tuple(args).makeGVariant())
            defer { g_variant_unref(body) }
            for destination in destinations {
                g_dbus_connection_emit_signal(conn.pointer, destination, BusNames.path, BusNames.interface, name, body, nil)
            }
        }
    }
}
