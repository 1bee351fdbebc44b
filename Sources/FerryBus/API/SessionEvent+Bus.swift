import FerryCore

/// SessionEvent <-> the (seq, kind, task, data) tuples of FetchEvents.
extension SessionEvent {
    /// The key a resumable completion's resume data travels under (`FetchedEvent`).
    public static let resumeDataKey = "resume-data"

    public var data: [String: Value] {
        switch self {
        case .progress(let received, let expected, let written):
            return ["received": .int64(received), "expected": .int64(expected ?? -1), "written": .int64(written)]
        case .sent(let sent, let expected, let written):
            return ["sent": .int64(sent), "expected": .int64(expected ?? -1), "written": .int64(written)]
        case .challenge(let scheme, let realm, let host, let failures, let proxy):
            var d: [String: Value] = [
                "scheme": .string(scheme), "realm": .string(realm), "host": .string(host),
                "previous-failures": .uint32(UInt32(clamping: failures)),
            ]
            if proxy { d["proxy"] = .bool(true) }  // only when it is: older readers see what they knew
            return d
        case .invalidated(let error):
            return ["error": .string(error ?? "")]
        case .resumed(let offset, let expected):
            return ["offset": .int64(offset), "expected": .int64(expected ?? -1)]
        case .finished(let file, let received):
            return ["file": .string(file), "received": .int64(received)]
        case .uploaded(let sent, let reply, let status, let cut, let headers):
            return [
                "file": .string(""), "received": .int64(sent), "reply-file": .string(reply),
                "status": .int64(Int64(status)),
                "reply-cut": .bool(cut), "reply-headers": .stringDict(headers ?? [:]),
            ]
        case .completed(let error, let errorName, let resumable):
            return [
                "error": .string(error ?? ""), "error-name": .string(errorName ?? ""), "resumable": .bool(resumable),
            ]
        }
    }

    /// nil for a kind this client does not know (a newer agent's). Every key the XML lists for
    /// the kind must be there with its type, or the event is refused naming the key: nothing is
    /// filled in with a default (`proxy`, sent only when true, is the one key that may be absent).
    public init?(kind: String, data d: [String: Value]) throws {
        let f = EventData(values: d, what: "a \(kind) event")
        switch kind {
        case "progress":
            self = .progress(
                received: try f.int("received"), expected: try f.size("expected"), written: try f.int("written"))
        case "sent":
            self = .sent(sent: try f.int("sent"), expected: try f.size("expected"), written: try f.int("written"))
        case "challenge":
            self = .challenge(
                scheme: try f.string("scheme"), realm: try f.string("realm"), host: try f.string("host"),
                previousFailures: Int(try f.value("previous-failures", "u").int64Value!),
                proxy: d["proxy"] == nil ? false : try f.bool("proxy"))
        case "invalidated": self = .invalidated(error: try f.text("error"))
        case "resumed": self = .resumed(offset: try f.int("offset"), expected: try f.size("expected"))
        case "finished" where d["reply-file"] != nil:
            self = .uploaded(
                sent: try f.int("received"), replyFile: try f.string("reply-file"), status: Int(try f.int("status")),
                cut: try f.bool("reply-cut"), headers: try f.value("reply-headers", "a{ss}").stringDictValue)
        case "finished": self = .finished(file: try f.string("file"), received: try f.int("received"))
        case "completed":
            self = .completed(
                error: try f.text("error"), errorName: try f.text("error-name"), resumable: try f.bool("resumable"))
        default: return nil
        }
    }
}

/// An event's data read by key, each of the type the XML gives it.
private struct EventData {
    let values: [String: Value]
    let what: String

    func value(_ key: String, _ signature: String) throws -> Value {
        guard let v = values[key] else { throw FerryError(.invalidArgument, "\(what): '\(key)' is missing") }
        guard v.typeString == signature else {
            throw FerryError(.invalidArgument, "\(what): '\(key)' must be \(signature), not \(v.typeString)")
        }
        return v
    }
    func int(_ key: String) throws -> Int64 { try value(key, "x").int64Value! }
    /// -1: not known.
    func size(_ key: String) throws -> Int64? { let n = try int(key); return n < 0 ? nil : n }
    func string(_ key: String) throws -> String { try value(key, "s").stringValue! }
    /// Empty: none.
    func text(_ key: String) throws -> String? { let s = try string(key); return s.isEmpty ? nil : s }
    func bool(_ key: String) throws -> Bool { try value(key, "b").boolValue! }
}

/// One FetchEvents entry: (seq, kind, task, data); a resumable completion carries its resume data.
public struct FetchedEvent: Sendable, Equatable {
    public var queued: QueuedEvent
    public var resumeData: [UInt8]?
    public init(_ queued: QueuedEvent, resumeData: [UInt8]? = nil) {
        self.queued = queued; self.resumeData = resumeData
    }

    public var bus: Value {
        var data = queued.event.data
        if let resumeData { data[SessionEvent.resumeDataKey] = .bytes(resumeData) }
        return .tuple([.uint64(queued.seq), .string(queued.event.kind), .uint64(UInt64(queued.task)), .dict(data)])
    }

    /// One element's type in FetchEvents' reply.
    public static let type = "(tsta{sv})"

    /// nil for a kind this client does not know (a newer agent's); a malformed entry throws.
    public init?(bus: Value) throws {
        let read: FetchedEvent? = try BusReader.members(of: bus, reading: "an event") { r in
            let seq = try r.uint64(), kind = try r.string(), task = try r.task(), data = try r.dict()
            guard let event = try SessionEvent(kind: kind, data: data) else { return nil }
            return FetchedEvent(
                QueuedEvent(seq: seq, task: task, event: event),
                resumeData: data[SessionEvent.resumeDataKey]?.bytesValue)
        }
        guard let read else { return nil }
        self = read
    }
}
