import CFerryShim
import CGLib
import FerryBus
import FerryCore
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
        agent.onEventsAvailable = { [unowned self] session, seq in
            self.emit("EventsAvailable", [.string(session), .uint64(seq)])
        }
        agent.onLauncherChanged = { [unowned self] in self.publishLauncher() }
        agent.onTaskChanged = { [unowned self] id, state in
            self.emit("TaskChanged", [.uint64(UInt64(id)), .string(state.rawValue)])
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

    private static let methodCall: GDBusInterfaceMethodCallFunc = { _, sender, _, _, method, params, invocation, user in
        let me = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
        let name = String(cString: method!)
        let args = params.map { Value($0).tupleValue ?? [] } ?? []
        do {
            let reply = try me.dispatch(name, args, sender: sender.map { String(cString: $0) } ?? "")
            g_dbus_method_invocation_return_value(invocation, Value.tuple(reply).makeGVariant())
        } catch let e as FerryError {
            g_dbus_method_invocation_return_dbus_error(invocation, e.dbusName, e.message)
        } catch {
            me.log.error("\(name) failed: \(error)")
            g_dbus_method_invocation_return_dbus_error(invocation, FerryError(.failed, "").dbusName, "internal error: \(error)")
        }
    }

    /// One line per method: unpack the (already type-checked) arguments, call the agent, pack the reply.
    func dispatch(_ method: String, _ a: [Value], sender: String) throws -> [Value] {
        func s(_ i: Int) -> String { a[i].stringValue ?? "" }
        func t(_ i: Int) -> Int64 { a[i].int64Value ?? 0 }
        func u(_ i: Int) -> Int { Int(a[i].int64Value ?? 0) }
        func d(_ i: Int) -> [String: Value] { a[i].dictValue ?? [:] }
        switch method {
        case "OpenSession":
            let reply = try agent.openSession(s(0), d(1))
            if !sender.isEmpty { agent.clientOpened(session: s(0), peer: sender) }
            return [.dict(reply)]
        case "CreateUpload":
            return [.uint64(UInt64(try agent.createUpload(session: s(0), url: s(1), file: s(2), options: d(3))))]
        case "AnswerChallenge": try agent.answerChallenge(t(0), d(1)); return []
        case "FinishedHandlingEvents": try agent.finishedHandlingEvents(session: s(0)); return []
        case "InvalidateSession":
            try agent.invalidateSession(s(0), cancelTasks: a[1].boolValue ?? false); return []
        case "GetSession":
            return [.dict(try agent.sessionInfo(s(0)))]
        case "CreateDownload":
            return [.uint64(UInt64(try agent.createDownloads(session: s(0), [(s(1), d(2))])[0]))]
        case "CreateDownloads":
            let requests: [(String, [String: Value])] = (a[1].arrayValue ?? []).map { item in
                let pair = item.tupleValue ?? []
                return (pair.first?.stringValue ?? "", pair.count > 1 ? pair[1].dictValue ?? [:] : [:])
            }
            guard !requests.isEmpty else { throw FerryError(.invalidArgument, "no requests given") }
            return [.array(try agent.createDownloads(session: s(0), requests).map { .uint64(UInt64($0)) }, elementType: "t")]
        case "CreateDownloadFromResumeData":
            return [.uint64(UInt64(try agent.createFromResumeData(session: s(0), a[1].bytesValue ?? [], d(2))))]
        case "ListTasks":
            let list = try agent.listTasks(session: s(0), after: t(1), limit: u(2))
            return [.array(list.map { .dict(TaskInfo($0).dictionary) }, elementType: "a{sv}")]
        case "GetTask":
            return [.dict(TaskInfo(try agent.task(t(0))).dictionary)]
        case "Pause": try agent.pause(t(0)); return []
        case "Resume": try agent.resume(t(0)); return []
        case "Cancel": try agent.cancel(t(0)); return []
        case "CancelProducingResumeData":
            return [.bytes(try agent.cancelProducingResumeData(t(0)))]
        case "FetchEvents":
            let events = try agent.fetchEvents(session: s(0), after: a[1].uint64Value ?? 0, limit: u(2))
            return [.array(events.map(eventValue), elementType: "(tsta{sv})")]
        case "AcknowledgeEvents":
            try agent.acknowledgeEvents(session: s(0), upTo: a[1].uint64Value ?? 0); return []
        case "ResetBadge":
            agent.resetBadge(); return []
        case "RemoveTasks":
            try agent.removeTasks((a[0].arrayValue ?? []).compactMap(\.int64Value)); return []
        case "ClearFinished":
            return [.uint32(UInt32(clamping: try agent.clearFinished(session: s(0))))]
        case "GetStatus":
            return [.dict(try agent.status())]
        default:
            throw FerryError(.invalidArgument, "unknown method \(method)")
        }
    }

    /// A queued event as FetchEvents returns it; a resumable completion carries its resume data.
    private func eventValue(_ e: QueuedEvent) -> Value {
        guard case .completed(_, _, true) = e.event, let blob = agent.resumeData(for: e.task) else { return e.busValue }
        var data = e.event.data
        data["resume-data"] = .bytes(blob)
        return .tuple([.uint64(e.seq), .string(e.event.kind), .uint64(UInt64(e.task)), .dict(data)])
    }

    /// Clients that leave the bus are no longer connected to their sessions.
    private func watchPeers(_ conn: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        g_dbus_connection_signal_subscribe(conn, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                           "/org/freedesktop/DBus", nil, G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, _, params, user in
            let args = params.map { Value($0).tupleValue ?? [] } ?? []
            guard args.count == 3, let name = args[0].stringValue, name.hasPrefix(":"),
                  args[2].stringValue == "" else { return }
            Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue().agent.peerVanished(name)
        }, me, nil)
    }

    /// The badge for docks and panels: com.canonical.Unity.LauncherEntry.Update for ferry.desktop.
    func publishLauncher() {
        guard let c = connection else { return }
        g_dbus_connection_emit_signal(c, nil, LauncherEntry.path, LauncherEntry.interface, "Update",
                                      Value.tuple([.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(agent))]).makeGVariant(), nil)
    }

    func emit(_ signal: String, _ args: [Value]) {
        assert(!CurlMulti.insideCurl, "a D-Bus signal inside a curl callback")
        guard let c = connection else { return }
        g_dbus_connection_emit_signal(c, nil, BusNames.path, BusNames.interface, signal, Value.tuple(args).makeGVariant(), nil)
    }
}
