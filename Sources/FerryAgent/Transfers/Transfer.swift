import CCurl
import CFerryShim
import FerryCore
import Glibc

/// A transfer that could not start (its errno decides: ENOSPC waits for space).
struct TransferStartFailure: Error {
    var errno: Int32
    var message: String
    var outcome: TransferOutcome { .localFailure(errno: errno, message: message) }
}

/// One attempt of one task: a curl easy handle writing into the task's staging file, or,
/// for an upload, reading the body from the app's file (the reply goes to a `ReplyFile`).
/// Inside curl's callbacks it only moves bytes and counts them; the agent reads `received` and
/// `takeHead()` after curl returned. When a response's first body bytes come, the transfer
/// pauses and waits for the core's decision on them (`apply`): append, restart or reject.
final class Transfer {
    let taskID: Int64
    /// Which attempt of the task this is (the loop drops reports of one it has since stopped).
    var attempt: UInt64 = 0
    /// The proxy this attempt goes through (nil: curl's own choice from the environment).
    let proxy: ProxyChoice?
    let easy: UnsafeMutableRawPointer
    /// The response's head, and the core's decision on its body.
    private var response: ResponseReader
    /// A download's staging file.
    let staging: StagingWriter?
    /// An upload's file and how much of it went; its reply.
    var upload: UploadBody
    let reply: ReplyFile?
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// Its place in the loop's round and under the speed limit (`Transfers`, `SpeedLimitWaits`).
    var pace = TransferPace()
    static let roundBudget = 2 << 20
    var onTouched: (Transfer) -> Void = { _ in }
    var bytesThisAttempt: Int64 = 0
    /// curl decodes what the server encodes (the plan's `decodesContent`): bounded.
    var decodes = false
    /// The core's leave for the body to begin before it read the head (the plan's).
    var goAhead: BodyGoAhead?
    /// The body decoded past `ContentCoding`'s bound: the attempt was aborted, in these words.
    var decodedBeyondBound: String?

    var isUpload: Bool { upload.source != nil }
    /// An upload's file (-1 for a download).
    var fd: Int32 { upload.fd }
    var source: UploadSource? { upload.source }
    /// Bytes of the entity: on disk (a download), or sent (an upload).
    var received: Int64 { staging?.received ?? upload.sent }
    var awaitingDecision: Bool { response.awaitingDecision }
    var began: Bool { response.began }
    var rejection: String? { response.rejection }
    var awaitsResource: Bool {
        get { response.awaitsResource }
        set { response.awaitsResource = newValue }
    }
    /// Why this attempt failed here, not at the server (a full disk, an unreadable file).
    var localErrno: Int32? { staging?.errno ?? upload.readErrno }
    var localMessage: String? { staging?.message }
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
        response = ResponseReader()
        if record.kind == .upload {
            let source = try UploadSource(record)
            upload = UploadBody(source: source, sent: plan.upload?.sendOffset ?? 0)
            do { reply = try ReplyFile(path: stagingPath) } catch { close(source.fd); throw error }
            staging = nil
        } else {
            // The disk's space is the core's to judge, at the head (before a body byte is written).
            staging = try StagingWriter(path: stagingPath, offset: plan.offset, receiveBuffer: plan.receiveBuffer)
            upload = UploadBody(source: nil, sent: 0)
            reply = nil
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
    func takeHead() -> ResponseHead? { response.takeHead() }

    /// Reads the response's head (first body bytes came, or it ended without any) and waits
    /// for the core's decision on its body, or goes on where the plan's `goAhead` allows.
    func headArrived() {
        let easy = easy
        response.headArrived(
            status: httpStatus, contentLength: { Int64(ferry_easy_info_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)) },
            header: { header($0) }, stagingSpace: staging?.space(),
            // Only a redirected response names another URL (a look-up per file otherwise).
            finalURL: { ferry_easy_info_long(easy, CURLINFO_REDIRECT_COUNT) > 0 ? self.effectiveURL : nil },
            goAhead: goAhead)
        if response.began, let length = response.announcedLength { staging?.preallocate(upTo: length) }
    }

    /// The state disk's free space measured after a few more MiB of a body of no announced
    /// length, once (for the core, which keeps the reserve).
    func takeMeasuredSpace() -> DiskSpace? { staging?.takeMeasuredSpace() }

    /// Carries out the core's decision on the body: append to the bytes on disk, or start the
    /// file again from zero (both preallocate the announced length, which the core found room
    /// for), or refuse the response (the next write aborts the attempt with `rejection`).
    func apply(_ decision: TaskMachine.BodyDecision) {
        response.decided(decision)
        switch decision {
        case .append:
            if let length = response.announcedLength { staging?.preallocate(upTo: length) }
        case .restartFromZero:
            guard staging?.restartFromZero() == true else { return }
            if let length = response.announcedLength { staging?.preallocate(upTo: length) }
        case .reject:
            break
        }
    }

    private static let pauseWriting = 0x1000_0001  // CURL_WRITEFUNC_PAUSE: curl hands them over again

    static let writeCallback: ferry_data_fn = { data, size, count, user in
        let me = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return me.write(data!, size * count)
    }

    func touch() { if !pace.touched { pace.touched = true; onTouched(self) } }

    private func write(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        touch()
        if let reply { return reply.append(data, length) }  // an upload's: kept aside, no decision
        if !response.began {  // the head goes to the core first (Transfers, after curl returned)
            headArrived()
            if !response.began { return Self.pauseWriting }
        }
        // Refused by the core, or an earlier flush failed: abort with CURLE_WRITE_ERROR.
        guard response.rejection == nil, let staging, staging.errno == nil else { return 0 }
        if pace.roundBytes >= Self.roundBudget {  // the loop's other sources first (Transfers resumes it)
            pace.yielded = true
            return Self.pauseWriting
        }
        if pace.bucket.rate > 0, !pace.bucket.take(length, now: Transfer.now) { return Self.pauseWriting }
        pace.roundBytes += length
        if decodes, decodedBeyondBound == nil {
            let easy = easy, decoded = bytesThisAttempt + Int64(length)
            var encoded: Int64 = 0
            let beyond = ContentCoding.beyondBound(decoded: decoded) {
                encoded = Int64(ferry_easy_info_off(easy, CURLINFO_SIZE_DOWNLOAD_T))  // the bytes as sent
                return encoded
            }
            if beyond {
                decodedBeyondBound = ContentCoding.boundMessage(decoded: decoded, encoded: encoded)
                return 0
            }
        }
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
