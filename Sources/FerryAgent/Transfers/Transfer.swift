import CCurl
import CFerryShim
import FerryCore
import Glibc

/// A transfer that could not start (its errno decides: ENOSPC waits for space).
struct TransferStartFailure: Error { var errno: Int32; var message: String }

/// One attempt of one task: a curl easy handle writing into the task's staging file, or,
/// for an upload, reading the body from the app's file (the reply goes to a `ReplyFile`).
/// Inside curl's callbacks it only moves bytes and counts them; the agent reads `received` and
/// `takeHead()` after curl returned. When a response's first body bytes come, the transfer
/// pauses and waits for the core's decision on them (`apply`): append, restart or reject.
final class Transfer {
    let taskID: Int64
    /// The proxy this attempt goes through (nil: curl's own choice from the environment).
    let proxy: ProxyChoice?
    let easy: UnsafeMutableRawPointer
    let isUpload: Bool
    private let requestedOffset: Int64  // the byte the request asked to start at
    /// Headers of a response whose body began, until the agent takes them.
    private var head: ResponseHead?
    /// Paused at the first body bytes (or ended with an empty body): the core decides next.
    private(set) var awaitingDecision = false
    /// The entity's length the response announced, for claiming its disk space.
    private var announcedLength: Int64?
    /// A download's staging file.
    let staging: StagingWriter?
    /// An upload's file to send (-1 for a download), and its reply.
    let fd: Int32
    let reply: ReplyFile?
    let source: UploadSource?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var awaitsResource = false  // a plain upload invited the IETF draft's upgrade; no 104 seen yet
    private(set) var began = false
    /// An upload's bytes handed to curl, from the body's start offset.
    var sent: Int64 = 0
    /// Bytes of the entity: on disk (a download), or sent (an upload).
    var received: Int64 { staging?.received ?? sent }
    /// An upload body ends before this byte of the file (a bounded PATCH).
    var sendEnd: Int64 = .max
    /// Curl moved bytes for this transfer since the agent last looked; `onTouched` tells the
    /// agent once per round, so a round looks at the transfers it moved, not at all 500.
    var touched = false
    /// Bytes taken this round; past `roundBudget` (about 5 ms of writes) it pauses, `yielded`,
    /// until the loop has served its other sources: from a fast server curl reads up to 100
    /// buffers (50 MiB) in one call, which held every D-Bus call for 100-200 ms.
    var roundBytes = 0, yielded = false
    var bucket = TokenBucket()  // the user's speed limit for it (see `RateGovernor`)
    static let roundBudget = 2 << 20
    var onTouched: (Transfer) -> Void = { _ in }
    var bytesThisAttempt: Int64 = 0
    /// An upload's file could not be read.
    var readErrno: Int32?
    /// Why this attempt failed here, not at the server (a full disk, an unreadable file).
    var localErrno: Int32? { staging?.errno ?? readErrno }
    var localMessage: String? { staging?.message }
    private(set) var rejection: String?
    let errorBuffer: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        p.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return p
    }()

    init(
        taskID: Int64, record: TaskRecord, plan: TaskMachine.TransferPlan, stagingPath: String,
        credential: Credential?, proxy: ProxyChoice? = nil, settings: TransferSettings
    ) throws {
        self.taskID = taskID
        self.proxy = proxy
        self.requestedOffset = plan.offset
        isUpload = record.kind == .upload
        if isUpload {
            let source = try UploadSource(record)
            self.source = source
            self.fd = source.fd
            self.sent = plan.upload?.sendOffset ?? 0
            do { reply = try ReplyFile(path: stagingPath) } catch { close(fd); throw error }
            staging = nil
        } else {
            let staging = try StagingWriter(path: stagingPath, offset: plan.offset, reserve: settings.stateReserve)
            // A known length: claim the space now, so a full disk shows before a byte is fetched.
            if let expected = record.expected, !staging.claim(upTo: expected) {
                throw TransferStartFailure(errno: staging.errno ?? ENOSPC, message: staging.message ?? "no space left")
            }
            self.staging = staging
            self.fd = -1
            reply = nil
            source = nil
        }
        easy = curl_easy_init()
        configure(plan: plan, settings: settings)
        authenticate(credential)
        if let step = plan.upload { setUploadStep(step) } else { setMethod(record.effectiveMethod) }
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        if fd >= 0 { close(fd) }
    }

    var errorMessage: String { String(cString: errorBuffer) }  // a failed attempt's, from curl
    var httpStatus: Int { ferry_easy_info_long(easy, CURLINFO_RESPONSE_CODE) }
    var proxyConnectStatus: Int { ferry_easy_info_long(easy, CURLINFO_HTTP_CONNECTCODE) }  // the answer to CONNECT
    var retryAfterSeconds: Int64? {
        let v = Int64(ferry_easy_info_off(easy, CURLINFO_RETRY_AFTER))
        return v > 0 ? v : nil
    }

    static func from(easy: UnsafeMutableRawPointer) -> Transfer? {
        guard let p = ferry_easy_info_private(easy) else { return nil }
        return Unmanaged<Transfer>.fromOpaque(p).takeUnretainedValue()
    }

    /// Reads a response header of the last response (after redirects).
    /// `ofConnect`: of the proxy's answer to CONNECT instead.
    func header(_ name: String, ofConnect: Bool = false) -> String? {
        var h: UnsafeMutablePointer<curl_header>?
        let origin = UInt32(ofConnect ? CURLH_CONNECT : CURLH_HEADER)
        guard curl_easy_header(easy, name, 0, origin, -1, &h) == CURLHE_OK, let h else { return nil }
        return String(cString: h.pointee.value)
    }

    /// The headers of the response whose body began, once (nil if none is new).
    func takeHead() -> ResponseHead? {
        defer { head = nil }
        return head
    }

    /// Reads the response's head (first body bytes came, or it ended without any) and waits
    /// for the core's decision on its body.
    func headArrived() {
        guard !began, !awaitingDecision else { return }
        awaitingDecision = true
        let status = httpStatus
        var rangeStart: Int64?
        if status == 206, let cr = header("Content-Range") {
            // "bytes START-END/TOTAL"
            let spec = cr.split(separator: " ").last.map(String.init) ?? ""
            let parts = spec.split(separator: "/")
            rangeStart = parts.first.flatMap { $0.split(separator: "-").first }.flatMap { Int64($0) }
            announcedLength = parts.count == 2 ? Int64(parts[1]) : nil
        } else {
            let length = Int64(ferry_easy_info_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T))
            announcedLength = length >= 0 ? length : nil
        }
        head = ResponseHead(
            status: status, contentRangeStart: rangeStart, totalLength: announcedLength, etag: header("ETag"),
            lastModified: header("Last-Modified"), contentDisposition: header("Content-Disposition"),
            contentEncoding: header("Content-Encoding"), contentType: header("Content-Type"))
    }

    /// Carries out the core's decision on the body: append to the bytes on disk, or start the
    /// file again from zero (both claim the announced length's space), or refuse the response
    /// (the next write aborts the attempt with `rejection`).
    func apply(_ decision: TaskMachine.BodyDecision) {
        began = true
        awaitingDecision = false
        switch decision {
        case .append:
            if let length = announcedLength { _ = staging?.claim(upTo: length) }
        case .restartFromZero:
            guard staging?.restartFromZero() == true else { return }
            if let length = announcedLength { _ = staging?.claim(upTo: length) }
        case .reject(let why):
            rejection = why
        }
    }

    private static let pauseWriting = 0x1000_0001  // CURL_WRITEFUNC_PAUSE: curl hands them over again

    static let writeCallback: ferry_data_fn = { data, size, count, user in
        let me = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return me.write(data!, size * count)
    }

    func touch() { if !touched { touched = true; onTouched(self) } }

    private func write(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        touch()
        if let reply { return reply.append(data, length) }  // an upload's: kept aside, no decision
        if !began {  // the head goes to the core first (Transfers, after curl returned)
            headArrived()
            return Self.pauseWriting
        }
        // Refused by the core, or an earlier flush failed: abort with CURLE_WRITE_ERROR.
        guard rejection == nil, let staging, staging.errno == nil else { return 0 }
        if roundBytes >= Self.roundBudget {  // the loop's other sources first (Transfers resumes it)
            yielded = true
            return Self.pauseWriting
        }
        if bucket.rate > 0, !bucket.take(length, now: Transfer.now) { return Self.pauseWriting }
        roundBytes += length
        guard staging.append(UnsafeRawPointer(data), length) else { return 0 }
        bytesThisAttempt += Int64(length)
        return length
    }

    /// Writes a download's gathered bytes to the staging file. False on failure.
    @discardableResult
    func flush() -> Bool { staging?.flush() ?? true }

    /// Forces the written bytes to disk (before a state that must survive a reboot).
    func sync() { staging?.sync() }
}
