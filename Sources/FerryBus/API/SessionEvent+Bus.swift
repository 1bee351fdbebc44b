import FerryCore

/// SessionEvent <-> the (seq, kind, task, data) tuples of FetchEvents.
extension SessionEvent {
    /// The key a resumable completion's resume data travels under (`FetchedEvent`).
    public static let resumeDataKey = CompletedEvent.Key.resumeData.rawValue

    public var data: [String: Value] {
        switch self {
        case .progress(let received, let expected, let written):
            let d: [ProgressEvent.Key: Value] = [
                .received: .int64(received), .expected: .int64(expected ?? -1), .written: .int64(written),
            ]
            return Self.keyed(d)
        case .sent(let sent, let expected, let written):
            let d: [SentEvent.Key: Value] = [
                .sent: .int64(sent), .expected: .int64(expected ?? -1), .written: .int64(written),
            ]
            return Self.keyed(d)
        case .challenge(let scheme, let realm, let host, let failures, let proxy):
            var d: [ChallengeEvent.Key: Value] = [
                .scheme: .string(scheme), .realm: .string(realm), .host: .string(host),
                .previousFailures: .uint32(UInt32(clamping: failures)),
            ]
            if proxy { d[.proxy] = .bool(true) }  // only when it is: older readers see what they knew
            return Self.keyed(d)
        case .invalidated(let error):
            let d: [InvalidatedEvent.Key: Value] = [.error: .string(error ?? "")]
            return Self.keyed(d)
        case .resumed(let offset, let expected):
            let d: [ResumedEvent.Key: Value] = [.offset: .int64(offset), .expected: .int64(expected ?? -1)]
            return Self.keyed(d)
        case .finished(let file, let received):
            let d: [FinishedEvent.Key: Value] = [.file: .string(file), .received: .int64(received)]
            return Self.keyed(d)
        case .uploaded(let sent, let reply, let status, let cut, let headers):
            let d: [FinishedEvent.Key: Value] = [
                .file: .string(""), .received: .int64(sent), .replyFile: .string(reply), .status: .int64(Int64(status)),
                .replyCut: .bool(cut), .replyHeaders: .stringDict(headers ?? [:]),
            ]
            return Self.keyed(d)
        case .completed(let error, let errorName, let resumable):
            let d: [CompletedEvent.Key: Value] = [
                .error: .string(error ?? ""), .errorName: .string(errorName ?? ""), .resumable: .bool(resumable),
            ]
            return Self.keyed(d)
        }
    }

    private static func keyed<K: BusKey>(_ d: [K: Value]) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: d.map { ($0.key.rawValue, $0.value) })
    }

    /// nil for a kind this client does not know (a newer agent's). Every key the XML marks as always
    /// there must be, with its type, or the event is refused naming the key: nothing is filled in
    /// with a default. The keys of each kind are the XML's (dev.ferry.Event.*).
    public init?(kind: String, data d: [String: Value]) throws {
        guard let known = EventKind(rawValue: kind) else { return nil }
        let what = "a \(kind) event"
        switch known {
        case .progress:
            let f = try BusFields<ProgressEvent.Key>(d, reading: what)
            self = .progress(
                received: try f.int64(.received), expected: try f.size(.expected), written: try f.int64(.written))
        case .sent:
            let f = try BusFields<SentEvent.Key>(d, reading: what)
            self = .sent(sent: try f.int64(.sent), expected: try f.size(.expected), written: try f.int64(.written))
        case .challenge:
            let f = try BusFields<ChallengeEvent.Key>(d, reading: what)
            self = .challenge(
                scheme: try f.string(.scheme), realm: try f.string(.realm), host: try f.string(.host),
                previousFailures: try f.count(.previousFailures), proxy: f.optional(.proxy) { $0.boolValue } ?? false)
        case .invalidated:
            self = .invalidated(error: try BusFields<InvalidatedEvent.Key>(d, reading: what).text(.error))
        case .resumed:
            let f = try BusFields<ResumedEvent.Key>(d, reading: what)
            self = .resumed(offset: try f.int64(.offset), expected: try f.size(.expected))
        case .finished:
            let f = try BusFields<FinishedEvent.Key>(d, reading: what)
            if d[FinishedEvent.Key.replyFile.rawValue] != nil {  // an upload the server took
                self = .uploaded(
                    sent: try f.int64(.received), replyFile: try f.string(.replyFile),
                    status: Int(try f.int64(.status)),
                    cut: try f.bool(.replyCut), headers: try f.value(.replyHeaders) { $0.stringDictValue })
            } else {
                self = .finished(file: try f.string(.file), received: try f.int64(.received))
            }
        case .completed:
            let f = try BusFields<CompletedEvent.Key>(d, reading: what)
            self = .completed(
                error: try f.text(.error), errorName: try f.text(.errorName), resumable: try f.bool(.resumable))
        }
    }
}

extension BusFields {
    /// x where -1 means not known.
    fileprivate func size(_ k: K) throws -> Int64? { let n = try int64(k); return n < 0 ? nil : n }
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
