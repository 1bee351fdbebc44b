import FerryBus
import FerrySDBus
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
    /// What each method of dev.ferry.Agent1 does.
    private var methods: AgentMethods { AgentMethods(bus: self) }
    let identity = CallerIdentity()
    /// Every reply and signal leaves through the agent's outbox, in order.
    var outbox: BusOutbox { agent.outbox }
    var onOutcome: (Outcome) -> Void = { _ in }
    var acquired = false
    /// Where claiming dev.ferry.Agent1 stands (BusService+Name).
    var claim = NameClaim.asking

    public init(agent: Agent, logger: Logger) throws {
        self.agent = agent
        self.log = logger
        objects = try BusObjects()
        agent.signals.eventsAvailable = { [unowned self] session, seq, app in
            // The app reads its own name for the session; the host, the agent's key.
            let name = SessionKey.name(of: session, app: app)
            emit(
                Agent1.EventsAvailable(session: session, latestSeq: seq), about: app,
                toTheApp: name == session ? nil : Agent1.EventsAvailable(session: name, latestSeq: seq))
        }
        agent.signals.launcherChanged = { [unowned self] in publishLauncher() }
        agent.signals.tasksRemoved = { [unowned self] ids, app in emit(Agent1.TasksRemoved(tasks: ids), about: app) }
        agent.signals.tasksProgressed = { [unowned self] moved, app in
            emit(Agent1.TasksProgressed(progress: moved), about: app)
        }
        agent.signals.taskChanged = { [unowned self] id, state, app in
            emit(Agent1.TaskChanged(task: id, state: state), about: app)
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
        // Every name that joins or leaves the bus (clients' connections; a dock appearing).
        identity.watchJoins()
        c.call(
            Self.busDaemon, Self.busPath, Self.busDaemon, "AddMatch",
            [
                .string(
                    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                        + "member='NameOwnerChanged'"
                )
            ],
            timeoutMilliseconds: 25_000
        ) { [unowned self] result in
            if case .success = result { identity.watching() }
        }
        claimName(on: c, replace: replace)
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
                guard let change = NameOwnerChanged(signal: args) else { return }
                let name = change.name, owner = change.newOwner
                if name == LauncherEntry.dock, !owner.isEmpty {
                    publishLauncher()  // a dock appeared: it learns the badge at once
                } else if name.hasPrefix(":"), !owner.isEmpty, change.oldOwner.isEmpty, let c = connection {
                    identity.joined(name, on: c) { [log] told in  // told while its process is surely its own
                        log.debug(
                            "connection \(name) joined: \(told ? "identified" : "not identified (never trusted)")")
                    }
                } else if name.hasPrefix(":"), owner.isEmpty {
                    // Clients that leave the bus are no longer connected to their sessions.
                    identity.forget(name)
                    // before, the agent has not started: no client of its yet
                    if acquired { agent.feed(.peerLeft(name)) }
                }
            case "NameAcquired" where BusReader.read(args, "NameAcquired", { try $0.string() }) == BusNames.agent:
                nameAcquired()
            case "NameLost" where BusReader.read(args, "NameLost", { try $0.string() }) == BusNames.agent && acquired:
                acquired = false
                onOutcome(.nameTaken)  // replaced by `ferryd --replace`
            default: break
            }
        default: break
        }
    }

    private func methodCall(_ message: BusMessage) {
        guard let c = connection else { return }
        let call = c.retain(message)
        switch objects.route(
            message,
            launcherProperties: { [.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(self.agent))] })
        {
        case .answer(let values): outbox.reply { c.reply(to: call, values) }
        case .property(let value): outbox.reply { c.reply(to: call, variant: value) }
        case .refuse(let name, let text): outbox.reply { c.replyError(to: call, name: name, message: text) }
        case .agentMethod(let name):
            let args = message.values()
            let from = message.sender ?? ""
            // Who calls decides what it may do: the first call of a connection waits for the answer.
            identity.identify(from, on: c) { [self] caller in
                guard let caller else {
                    fail(
                        call,
                        FerryError(
                            .accessDenied, "cannot tell which app is calling (its process is gone or unreadable)"))
                    return
                }
                guard let method = AgentMethod(rawValue: name) else {
                    return fail(call, FerryError(.invalidArgument, "unknown method \(name)"))
                }
                methods.handle(method, args, CallContext(caller: caller, sender: from)) { [self] result in
                    reply(call, name) { try result.get() }
                }
            }
        }
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

    /// The badge for docks and panels: com.canonical.Unity.LauncherEntry.Update for dev.ferry.Downloads.desktop.
    func publishLauncher() {
        guard let c = connection else { return }
        let body: [Value] = [.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(agent))]
        outbox.send { c.signal(path: LauncherEntry.path, interface: LauncherEntry.interface, member: "Update", body) }
    }

    /// The host's signals are broadcast (scripts listen with plain match rules). A sandboxed
    /// app's go, addressed, only to its own connections and to the host's programs that have
    /// called the agent: other sandboxes hear nothing of them.
    /// `toTheApp`: what the app's own connections get instead (its names for its sessions).
    func emit<S: Agent1Signal>(_ signal: S, about app: String, toTheApp own: S? = nil) {
        assert(!CurlMulti.insideCurl, "a D-Bus signal inside a curl callback")
        guard let c = connection else { return }
        if let own {
            let apps = identity.peers(of: app), name = S.signal.rawValue, mine = own.arguments,
                theirs = signal.arguments
            let hosts = identity.peers(entitledTo: app).filter { !apps.contains($0) }
            outbox.send {
                for d in apps {
                    c.signal(path: BusNames.path, interface: BusNames.interface, member: name, mine, destination: d)
                }
                for d in hosts {
                    c.signal(path: BusNames.path, interface: BusNames.interface, member: name, theirs, destination: d)
                }
            }
            return
        }
        // The user's tasks are the host's business: broadcast while no sandboxed app is on the
        // bus to hear it, else sent to each host connection.
        let destinations: [String?] = app.isEmpty && !identity.anyAppConnected ? [nil] : identity.peers(entitledTo: app)
        let name = S.signal.rawValue, args = signal.arguments
        outbox.send {
            for destination in destinations {
                c.signal(
                    path: BusNames.path, interface: BusNames.interface, member: name, args, destination: destination)
            }
        }
    }
}
