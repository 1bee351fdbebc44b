import FerryCore

/// OpenSession's configuration dictionary (and GetSession's "configuration"): its keys,
/// spelled once.
extension SessionOptions {
    public enum Key: String, CaseIterable, Sendable {
        case launchCommand = "launch-command", relaunch, discretionary, allowMetered = "allow-metered"
        case perHostLimit = "per-host-limit", requestTimeout = "request-timeout", resourceTimeout = "resource-timeout"
        case popups, keepEvents = "keep-events", defaultDirectory = "default-directory", maxRate = "max-rate", cookies
    }

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
        ["identifier": .string(identifier), "created": .bool(created), "latest-seq": .uint64(latestSeq), "inbox": .string(inbox)]
    }
    public init(bus d: [String: Value]) {
        self.init(identifier: d["identifier"]?.stringValue ?? "", created: d["created"]?.boolValue ?? false,
                  latestSeq: d["latest-seq"]?.uint64Value ?? 0, inbox: d["inbox"]?.stringValue ?? "")
    }
}

/// GetSession's reply.
extension SessionInfo {
    public var bus: [String: Value] {
        let c = configuration
        var options = SessionOptions(c)
        if options.launchCommand == nil { options.launchCommand = [] }
        return ["identifier": .string(identifier), "configuration": .dict(options.bus),
                "clients": .uint32(UInt32(clamping: clients)), "pending-events": .uint32(UInt32(clamping: pendingEvents)),
                "latest-seq": .uint64(latestSeq), "invalidating": .bool(c.invalidating),
                "relaunch": .string(relaunch), "finished-events": .int64(finishedEvents), "app": .string(c.app)]
    }

    public init(bus d: [String: Value]) {
        var c = (try? SessionOptions(bus: d["configuration"]?.dictValue ?? [:]))?.applied(to: SessionConfig()) ?? SessionConfig()
        c.invalidating = d["invalidating"]?.boolValue ?? false
        c.app = d["app"]?.stringValue ?? ""
        self.init(identifier: d["identifier"]?.stringValue ?? "", configuration: c,
                  clients: Int(d["clients"]?.int64Value ?? 0), pendingEvents: Int(d["pending-events"]?.int64Value ?? 0),
                  latestSeq: d["latest-seq"]?.uint64Value ?? 0, relaunch: d["relaunch"]?.stringValue ?? "",
                  finishedEvents: d["finished-events"]?.int64Value ?? 0)
    }
}
