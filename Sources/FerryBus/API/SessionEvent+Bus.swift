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

    public init?(kind: String, data d: [String: Value]) {
        func i(_ k: String) -> Int64 { d[k]?.int64Value ?? 0 }
        func opt(_ k: String) -> Int64? { d[k]?.int64Value.flatMap { $0 < 0 ? nil : $0 } }
        func s(_ k: String) -> String? { d[k]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        switch kind {
        case "progress": self = .progress(received: i("received"), expected: opt("expected"), written: i("written"))
        case "sent": self = .sent(sent: i("sent"), expected: opt("expected"), written: i("written"))
        case "challenge":
            self = .challenge(
                scheme: d["scheme"]?.stringValue ?? "", realm: d["realm"]?.stringValue ?? "",
                host: d["host"]?.stringValue ?? "", previousFailures: Int(i("previous-failures")),
                proxy: d["proxy"]?.boolValue ?? false)
        case "invalidated": self = .invalidated(error: s("error"))
        case "resumed": self = .resumed(offset: i("offset"), expected: opt("expected"))
        case "finished" where d["reply-file"] != nil:
            self = .uploaded(
                sent: i("received"), replyFile: s("reply-file") ?? "", status: Int(i("status")),
                cut: d["reply-cut"]?.boolValue ?? false, headers: d["reply-headers"]?.stringDictValue)
        case "finished": self = .finished(file: s("file") ?? "", received: i("received"))
        case "completed":
            self = .completed(
                error: s("error"), errorName: s("error-name"), resumable: d["resumable"]?.boolValue ?? false)
        default: return nil
        }
    }
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
            guard let event = SessionEvent(kind: kind, data: data) else { return nil }
            return FetchedEvent(
                QueuedEvent(seq: seq, task: task, event: event),
                resumeData: data[SessionEvent.resumeDataKey]?.bytesValue)
        }
        guard let read else { return nil }
        self = read
    }
}
