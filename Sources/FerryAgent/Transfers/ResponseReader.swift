import FerryCore

/// What one attempt learns of its response before its body: the head, read when the first
/// body bytes come (or the response ends without any) and handed to the core once, and the
/// core's decision on the body, which the transfer waits for (append, restart or reject).
struct ResponseReader {
    /// Headers of a response whose body began, until the agent takes them.
    private var head: ResponseHead?
    /// Paused at the first body bytes (or ended with an empty body): the core decides next.
    private(set) var awaitingDecision = false
    /// The core decided: the body goes on (or is refused, `rejection`).
    private(set) var began = false
    /// The entity's length the response announced, for claiming its disk space.
    private(set) var announcedLength: Int64?
    /// Why the core refused the response (the next write aborts the attempt).
    private(set) var rejection: String?
    /// A plain upload invited the IETF draft's upgrade, and no 104 came yet.
    var awaitsResource = false

    /// Reads the head of the response (`header` gives the last response's header by name),
    /// once, and waits for the core's decision, or goes on where the core's `goAhead` allows.
    mutating func headArrived(
        status: Int, contentLength: () -> Int64, header: (String) -> String?, stagingSpace: DiskSpace?,
        finalURL: () -> String?, goAhead: BodyGoAhead?
    ) {
        guard !began, !awaitingDecision else { return }
        awaitingDecision = true
        var rangeStart: Int64?
        if status == 206, let cr = header("Content-Range") {
            // "bytes START-END/TOTAL"
            let spec = cr.split(separator: " ").last.map(String.init) ?? ""
            let parts = spec.split(separator: "/")
            rangeStart = parts.first.flatMap { $0.split(separator: "-").first }.flatMap { Int64($0) }
            announcedLength = parts.count == 2 ? Int64(parts[1]) : nil
        } else {
            let length = contentLength()
            announcedLength = length >= 0 ? length : nil
        }
        var read = ResponseHead(
            status: status, contentRangeStart: rangeStart, totalLength: announcedLength, etag: header("ETag"),
            lastModified: header("Last-Modified"), contentDisposition: header("Content-Disposition"),
            contentEncoding: header("Content-Encoding"), contentType: header("Content-Type"),
            stagingSpace: stagingSpace, finalURL: finalURL())
        if let goAhead, goAhead.allows(read) {
            read.wentAhead = true
            decided(.append)  // on an empty file the same as restartFromZero
        }
        head = read
    }

    /// The head of a response whose body began, once (nil if none is new).
    mutating func takeHead() -> ResponseHead? {
        defer { head = nil }
        return head
    }

    /// The core decided on the body.
    mutating func decided(_ decision: TaskMachine.BodyDecision) {
        began = true
        awaitingDecision = false
        if case .reject(let why) = decision { rejection = why }
    }
}

/// Where one transfer stands in the loop's round and under the user's speed limit.
struct TransferPace {
    /// Curl moved bytes for it since the agent last looked (the agent hears once a round, so a
    /// round looks at the transfers it moved, not at all 500).
    var touched = false
    /// Bytes taken this round; past `Transfer.roundBudget` (about 5 ms of writes) it pauses,
    /// `yielded`, until the loop has served its other sources: from a fast server curl reads up
    /// to 100 buffers (50 MiB) in one call, which held every D-Bus call for 100-200 ms.
    var roundBytes = 0
    var yielded = false
    /// The user's speed limit for it (the core shares them: `SpeedLimits`).
    var bucket = TokenBucket()
}
