import FoundationEssentials

/// The life of one task as a value: each event returns what the I/O shell must do.
/// No I/O, no clocks, no randomness inside: time and random numbers come in as arguments.
public struct TaskMachine: Sendable {
    public internal(set) var record: TaskRecord
    /// When the last progress event went out (µs), for rate limiting.
    var lastProgressAt: Int64?
    var lastProgressBytes: Int64 = 0
    /// The offset the running attempt asked for.
    var requestedOffset: Int64 = 0
    /// The request of a resumable upload now under way.
    var uploadStep: UploadStep?
    /// How much a resumable upload's next request sends, and when the running one began (µs).
    var patchSize = PatchSize()
    var stepStartedAt: Int64 = 0
    /// Why automatic discovery found no protocol where one may be (said with a failure).
    var discoveryDoubt: String?
    /// The running attempt lets curl decode a content-encoded answer.
    var decodesContent = false

    public init(_ record: TaskRecord) {
        self.record = record
        self.lastProgressBytes = record.received
    }

    /// What the shell asks curl for.
    public struct TransferPlan: Sendable, Equatable {
        public var url: String
        /// Resume from this byte (0 = whole entity).
        public var offset: Int64
        /// Sent as If-Range when offset > 0.
        public var ifRange: String?
        public var headers: [String: String]
        /// The session's cookie file (nil: no cookies kept); the core fills it in.
        public var cookieJar: String? = nil
        /// A request of a resumable upload (nil: a plain download or upload).
        public var upload: UploadStep? = nil
        /// curl decodes a content-encoded answer (see ContentCoding); off: the bytes as sent.
        public var decodesContent = false
        /// The answer to the proxy's 407 (the core fills it in; never stored).
        public var proxyCredential: Credential? = nil
        /// Bytes curl receives into at once (the core sets it from how many may run).
        public var receiveBuffer = ReceiveBuffer.largest
        /// Redirects only to https (an https upload's file never goes out in clear text).
        public var httpsRedirectsOnly = false
        /// The body may begin before the core read the head, where this rule allows (the core
        /// sets it for a download from byte 0).
        public var goAhead: BodyGoAhead? = nil
    }

    public enum Action: Sendable, Equatable {
        case startTransfer(TransferPlan)
        case stopTransfer
        /// Remove the staging bytes (cancel, or a partial we cannot validate).
        case discardPartial
        /// Verify (checksum) and move the staging file to its destination.
        case finalize
        /// Keep the finished bytes out of the user's way (checksum mismatch): never delivered.
        case quarantine
        /// Tell the user a file waits for disk space (the shell says so once per task).
        case warnNoSpace
        case scheduleRetry(atMicroseconds: Int64)
        case emit(SessionEvent)
        /// Write the record to the store now (state changes; progress waits for a checkpoint).
        case persist
    }

    /// What to do with the first body bytes of a response.
    public enum BodyDecision: Sendable, Equatable {
        /// 206 at the offset we asked for: append.
        case append
        /// A full entity (200): truncate the staging file and write from zero.
        case restartFromZero
        /// The response cannot be used (wrong range): abort this attempt.
        case reject(String)
    }

    /// Minimum time between two progress events of one task (~10 per second).
    public static let progressInterval: Int64 = 100_000

    // MARK: - State changes (every field a state owns is set here, nowhere else)

    /// Queued, running or paused: no wait reason, no retry time.
    mutating func move(to state: TaskState, now: Int64) {
        record.state = state
        record.reason = nil
        record.retryAt = nil
        record.updated = now
    }

    /// Waiting for `reason`; looked at again at `retryAt` (nil: when something changes).
    mutating func wait(_ reason: WaitReason, error: String?, retryAt: Int64?, now: Int64) {
        record.state = .waiting
        record.reason = reason
        record.error = error
        record.retryAt = retryAt
        record.updated = now
    }

    /// Completed, failed or canceled (`error` nil on success).
    mutating func end(_ state: TaskState, error: String? = nil, errorName: String? = nil, now: Int64) {
        record.state = state
        record.reason = nil
        record.retryAt = nil
        record.error = error
        record.errorName = errorName
        record.updated = now
    }

    // MARK: - Scheduling

    /// The scheduler gave this task a slot. `partialBytes` is the size of the staging file.
    public mutating func start(partialBytes: Int64, now: Int64) -> [Action] {
        guard record.state == .queued || record.state == .waiting else { return [] }
        var actions: [Action] = []
        var offset = partialBytes
        // Every byte of the entity is on disk already (a crash or a full destination stopped
        // the task between the last byte and its final name): save it, fetch nothing.
        if record.kind == .download, let expected = record.expected, expected > 0, partialBytes == expected {
            record.received = expected
            move(to: .running, now: now)
            return [.persist, .finalize]
        }
        // Resume only what we can validate; anything else restarts cleanly.
        if offset > 0 && record.resumeValidator == nil {
            actions.append(.discardPartial)
            offset = 0
        }
        if let expected = record.expected, offset > expected {
            actions.append(.discardPartial)
            offset = 0
        }
        record.received = offset
        lastProgressBytes = offset
        requestedOffset = offset
        move(to: .running, now: now)
        var plan = TransferPlan(
            url: record.url, offset: offset,
            ifRange: offset > 0 ? record.resumeValidator : nil, headers: record.headers)
        if record.kind == .upload {
            plan = firstUploadPlan()
        } else {
            plan.decodesContent = ContentCoding.decodes(record)
        }
        decodesContent = plan.decodesContent
        uploadStep = plan.upload
        actions.append(.persist)
        actions.append(.startTransfer(plan))
        return actions
    }

    /// What to do with a response's body, from its status and range alone (the transfer waits,
    /// paused before its first body byte, for this decision).
    public static func bodyDecision(status: Int, contentRangeStart: Int64?, requestedOffset: Int64) -> BodyDecision {
        guard status == 206 else { return .restartFromZero }
        guard let start = contentRangeStart, start == requestedOffset else {
            return .reject(
                "server sent a byte range starting at \(contentRangeStart.map(String.init) ?? "?") instead of "
                    + "\(requestedOffset)"
            )
        }
        return .append
    }

    /// Response headers of the final response (after redirects) and the decision for its body.
    public mutating func responseBegan(
        status: Int, contentRangeStart: Int64?, totalLength: Int64?,
        etag: String?, lastModified: String?, suggestedName: String?,
        contentEncoding: String? = nil, contentType: String? = nil
    ) -> (BodyDecision, [Action]) {
        var actions: [Action] = []
        let decoded = decodesContent && ContentCoding.isEncoded(contentEncoding)
        if decoded, ContentCoding.isLabelledFile(contentType: contentType, name: suggestedName) {
            // A compressed file the server labels as encoded: fetch it again, byte for byte.
            record.keepsEncoding = true
            return (.reject("the server labels a compressed file as content-encoded: fetching it again as sent"), [])
        }
        if decoded, requestedOffset > 0 {  // a range of encoded bytes cannot follow decoded ones
            return (.reject("the server encoded its answer to a range: fetching the whole file again"), [])
        }
        let decision = Self.bodyDecision(
            status: status, contentRangeStart: contentRangeStart, requestedOffset: requestedOffset)
        if case .reject = decision { return (decision, []) }
        if decision == .append {
            if requestedOffset > 0 {
                actions.append(.emit(.resumed(offset: requestedOffset, expected: totalLength ?? record.expected)))
            }
        } else {
            // Bytes held and the whole file sent (its validator no longer matches: a changed
            // file, or a new URL to another): the app hears it starts over, as URLSession says it.
            if requestedOffset > 0 { actions.append(.emit(.resumed(offset: 0, expected: totalLength))) }
            record.received = 0
            lastProgressBytes = 0
        }
        if decision == .restartFromZero || etag != nil || lastModified != nil {
            // A new entity (or a confirmed one): remember its validators for the next resume.
            record.etag = etag
            record.lastModified = lastModified
        }
        if let totalLength { record.expected = totalLength }
        if let suggestedName { record.suggestedName = suggestedName }
        if decoded {
            // Decoded bytes: their count is not the encoded length, and a Range would count
            // encoded bytes. Such a download starts again from zero if it is interrupted.
            record.expected = nil
            record.etag = nil
            record.lastModified = nil
        }
        actions.append(.persist)
        return (decision, actions)
    }

    /// Body bytes arrived; `received` is the running total for the entity.
    public mutating func progressed(received: Int64, now: Int64) -> [Action] {
        record.received = received
        if let last = lastProgressAt, now - last < Self.progressInterval { return [] }
        let written = received - lastProgressBytes
        lastProgressAt = now
        lastProgressBytes = received
        return [.emit(progressEvent(written: written))]
    }

    /// Downloads report bytes received (didWriteData), uploads bytes sent (didSendBodyData).
    func progressEvent(written: Int64) -> SessionEvent {
        record.kind == .upload
            ? .sent(sent: record.received, expected: record.expected, written: written)
            : .progress(received: record.received, expected: record.expected, written: written)
    }
}
