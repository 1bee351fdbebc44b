import FerryCore

/// OpenSession's configuration dictionary (and GetSession's "configuration"); its keys (`Key`)
/// are generated from the XML.
extension SessionOptions {
    /// Unknown keys are ignored (older agents gain options over time); a wrong type is refused.
    public init(bus d: [String: Value]) throws {
        self.init()
        launchCommand = try OptionValue.strings(d, Key.launchCommand.rawValue)
        relaunch = try OptionValue.bool(d, Key.relaunch.rawValue)
        discretionary = try OptionValue.bool(d, Key.discretionary.rawValue)
        allowMetered = try OptionValue.bool(d, Key.allowMetered.rawValue)
        perHostLimit = try OptionValue.count(d, Key.perHostLimit.rawValue)
        requestTimeout = try OptionValue.count(d, Key.requestTimeout.rawValue)
        resourceTimeout = try OptionValue.count(d, Key.resourceTimeout.rawValue)
        popups = try OptionValue.bool(d, Key.popups.rawValue)
        keepEvents = try OptionValue.bool(d, Key.keepEvents.rawValue)
        defaultDirectory = try OptionValue.string(d, Key.defaultDirectory.rawValue)
        maxRate = try OptionValue.count(d, Key.maxRate.rawValue).map(Int64.init)
        cookies = try OptionValue.bool(d, Key.cookies.rawValue)
    }

    public var bus: [String: Value] {
        var d: [String: Value] = [:]
        if let v = launchCommand { d[Key.launchCommand.rawValue] = .strings(v) }
        if let v = relaunch { d[Key.relaunch.rawValue] = .bool(v) }
        if let v = discretionary { d[Key.discretionary.rawValue] = .bool(v) }
        if let v = allowMetered { d[Key.allowMetered.rawValue] = .bool(v) }
        if let v = perHostLimit { d[Key.perHostLimit.rawValue] = .uint32(UInt32(clamping: v)) }
        if let v = requestTimeout { d[Key.requestTimeout.rawValue] = .uint32(UInt32(clamping: v)) }
        if let v = resourceTimeout { d[Key.resourceTimeout.rawValue] = .uint32(UInt32(clamping: v)) }
        if let v = popups { d[Key.popups.rawValue] = .bool(v) }
        if let v = keepEvents { d[Key.keepEvents.rawValue] = .bool(v) }
        if let v = defaultDirectory { d[Key.defaultDirectory.rawValue] = .string(v) }
        if let v = maxRate { d[Key.maxRate.rawValue] = .int64(v) }
        if let v = cookies { d[Key.cookies.rawValue] = .bool(v) }
        return d
    }
}

/// OpenSession's reply.
public struct OpenedSession: Sendable, Equatable {
    public var identifier: String
    public var created: Bool
    public var latestSeq: UInt64
    /// The agent's folder for the session's finished files until the app moves them.
    public var inbox: String
    public init(identifier: String, created: Bool, latestSeq: UInt64, inbox: String) {
        self.identifier = identifier; self.created = created; self.latestSeq = latestSeq; self.inbox = inbox
    }

    public var bus: [String: Value] {
        [
            Key.identifier.rawValue: .string(identifier), Key.created.rawValue: .bool(created),
            Key.latestSeq.rawValue: .uint64(latestSeq), Key.inbox.rawValue: .string(inbox),
        ]
    }
    public init(bus d: [String: Value]) throws {
        let f = try BusFields<Key>(d, reading: "the opened session")
        self.init(
            identifier: try f.string(.identifier), created: try f.bool(.created), latestSeq: try f.uint64(.latestSeq),
            inbox: try f.string(.inbox))
    }
}

/// GetSession's reply.
extension SessionInfo {
    public var bus: [String: Value] {
        let c = configuration
        var options = SessionOptions(c)
        if options.launchCommand == nil { options.launchCommand = [] }
        return [
            Key.identifier.rawValue: .string(identifier), Key.configuration.rawValue: .dict(options.bus),
            Key.clients.rawValue: .uint32(UInt32(clamping: clients)),
            Key.pendingEvents.rawValue: .uint32(UInt32(clamping: pendingEvents)),
            Key.latestSeq.rawValue: .uint64(latestSeq),
            Key.invalidating.rawValue: .bool(c.invalidating), Key.relaunch.rawValue: .string(relaunch),
            Key.finishedEvents.rawValue: .int64(finishedEvents), Key.app.rawValue: .string(c.app),
        ]
    }

    public init(bus d: [String: Value]) throws {
        let f = try BusFields<Key>(d, reading: "the session")
        var c = try SessionOptions(bus: f.dict(.configuration)).applied(to: SessionConfig())
        c.invalidating = try f.bool(.invalidating)
        c.app = try f.string(.app)
        self.init(
            identifier: try f.string(.identifier), configuration: c, clients: try f.count(.clients),
            pendingEvents: try f.count(.pendingEvents), latestSeq: try f.uint64(.latestSeq),
            relaunch: try f.string(.relaunch),
            finishedEvents: try f.int64(.finishedEvents))
    }
}
