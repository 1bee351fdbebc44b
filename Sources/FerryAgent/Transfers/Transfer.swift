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
    private let requestedOffset: Int64   // the byte the request asked to start at
    /// Headers of a response whose body began, until the agent takes them.
    private var head: ResponseHead?
    /// Paused at the first body bytes (or ended with an empty body): the core decides next.
    private(set) var awaitingDecision = false
    /// The entity's length the response announced, for claiming its disk space.
    private var announcedLength: Int64?
    /// The staging file (download) or the file to send (upload), and an upload's reply.
    let fd: Int32
    let reply: ReplyFile?
    let source: UploadSource?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var awaitsResource = false   // a plain upload invited the IETF draft's upgrade; no 104 seen yet
    private(set) var began = false
    /// Bytes of the entity on disk (offset + this attempt).
    var received: Int64
    /// An upload body ends before this byte of the file (a bounded PATCH).
    var sendEnd: Int64 = .max
    /// Curl moved bytes for this transfer since the agent last looked; `onTouched` tells the
    /// agent once per round, so a round looks at the transfers it moved, not at all 500.
    var touched = false
    /// Bytes taken this round; past `roundBudget` (about 5 ms of writes) it pauses, `yielded`,
    /// until the loop has served its other sources: from a fast server curl reads up to 100
    /// buffers (50 MiB) in one call, which held every D-Bus call for 100-200 ms.
    var roundBytes = 0, yielded = false
    var bucket = TokenBucket()   // the user's speed limit for it (see `RateGovernor`)
    static let roundBudget = 2 << 20
    var onTouched: (Transfer) -> Void = { _ in }
    var bytesThisAttempt: Int64 = 0
    var writeErrno: Int32?
    /// What a local failure means, in words (which disk is full).
    private(set) var localMessage: String?
    private(set) var rejection: String?
    private let reserve: SpaceReserve
    /// Bytes written since the last look at the state disk's free space.
    private var sinceSpaceCheck: Int64 = 0
    /// Bytes up to here have their disk blocks claimed (no need to look at free space again).
    private var claimedUpTo: Int64 = 0
    /// curl hands the body over in 16 kB pieces; writing each costs a syscall. Pieces are gathered
    /// here and written once per socket wake-up (`flush`), up to a few hundred kB at a time.
    /// 256 kB: few writes per GiB, and little lost if the agent is killed mid-round (bytes still
    /// here are fetched again; at 2 MB a kill -9 cost up to 2 MB).
    private let pending = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 64)
    private var pendingCount = 0
    let errorBuffer: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        p.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return p
    }()

    init(taskID: Int64, record: TaskRecord, plan: TaskMachine.TransferPlan, stagingPath: String,
         credential: Credential?, proxy: ProxyChoice? = nil, settings: TransferSettings) throws {
        self.taskID = taskID
        self.proxy = proxy
        self.requestedOffset = plan.offset
        self.reserve = settings.stateReserve
        isUpload = record.kind == .upload
        if isUpload {
            let source = try UploadSource(record)
            self.source = source
            self.fd = source.fd
            self.received = plan.upload?.sendOffset ?? 0
            do { reply = try ReplyFile(path: stagingPath) } catch { close(fd); throw error }
        } else {
            // From the start: O_TRUNC (no ftruncate, which costs a journal entry even on an empty file).
            let fd = open(stagingPath, O_WRONLY | O_CREAT | O_CLOEXEC | (plan.offset == 0 ? O_TRUNC : 0), 0o600)
            guard fd >= 0 else {
                let e = errno
                throw TransferStartFailure(errno: e, message: "cannot open staging file \(stagingPath): \(String(cString: strerror(e)))")
            }
            // Position at the planned offset; bytes beyond it are stale.
            if plan.offset > 0, ftruncate(fd, off_t(plan.offset)) != 0 || lseek(fd, off_t(plan.offset), SEEK_SET) < 0 {
                let e = errno; close(fd)
                throw TransferStartFailure(errno: e, message: "cannot prepare staging file: \(String(cString: strerror(e)))")
            }
            self.fd = fd
            self.received = plan.offset
            reply = nil
            source = nil
        }
        easy = curl_easy_init()
        // A known length: claim the space now, so a full disk shows before a byte is fetched.
        if !isUpload, let expected = record.expected, !reserveSpace(upTo: expected) {
            throw TransferStartFailure(errno: writeErrno ?? ENOSPC, message: localMessage ?? "no space left")
        }
        configure(plan: plan, settings: settings)
        authenticate(credential)
        if let step = plan.upload { setUploadStep(step) } else { setMethod(record.effectiveMethod) }
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        pending.deallocate()
        if fd >= 0 { close(fd) }
    }

    /// Checks the state disk's reserve for the bytes still to come and preallocates them
    /// (FALLOC_FL_KEEP_SIZE: the file's size keeps saying how much was written).
    /// False, with `writeErrno` ENOSPC and `localMessage` set, when they do not fit.
    private func reserveSpace(upTo length: Int64) -> Bool {
        let remaining = length - received
        var vfs = statvfs()
        if fstatvfs(fd, &vfs) == 0 {
            let unit = Int64(vfs.f_frsize)
            let available = Int64(vfs.f_bavail) * unit, total = Int64(vfs.f_blocks) * unit
            guard reserve.allows(writing: remaining, available: available, total: total) else {
                writeErrno = ENOSPC
                localMessage = reserve.refusal(available: available, total: total)
                return false
            }
        }
        sinceSpaceCheck = 0
        // A small body fits in what the check above saw free (the reserve stays free after it);
        // preallocating guards long downloads against space others take meanwhile.
        guard remaining > Self.preallocateFrom else { return true }
        if ferry_preallocate(fd, received, remaining) != 0, errno == ENOSPC {
            writeErrno = ENOSPC
            localMessage = "no space left for the download's \(remaining) remaining bytes on the disk holding Ferry's state folder"
            return false
        }
        claimedUpTo = length
        return true
    }

    var errorMessage: String { String(cString: errorBuffer) }   // a failed attempt's, from curl
    var httpStatus: Int { ferry_easy_info_long(easy, CURLINFO_RESPONSE_CODE) }
    var proxyConnectStatus: Int { ferry_easy_info_long(easy, CURLINFO_HTTP_CONNECTCODE) }   // the answer to CONNECT
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
        head = ResponseHead(status: status, contentRangeStart: rangeStart, totalLength: announcedLength, etag: header("ETag"),
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
            if let length = announcedLength { _ = reserveSpace(upTo: length) }
        case .restartFromZero:
            // A file opened at 0 is empty still: nothing to cut.
            if received > 0, ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) < 0 { writeErrno = errno; return }
            received = 0
            pendingCount = 0
            if let length = announcedLength { _ = reserveSpace(upTo: length) }
        case .reject(let why):
            rejection = why
        }
    }

    private static let pauseWriting = 0x1000_0001   // CURL_WRITEFUNC_PAUSE: curl hands them over again

    static let writeCallback: ferry_data_fn = { data, size, count, user in
        let me = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return me.write(data!, size * count)
    }

    func touch() { if !touched { touched = true; onTouched(self) } }

    private func write(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        touch()
        if let reply { return reply.append(data, length) }   // an upload's: kept aside, no decision
        if !began {   // the head goes to the core first (Transfers, after curl returned)
            headArrived()
            return Self.pauseWriting
        }
        // Refused by the core, or an earlier flush failed: abort with CURLE_WRITE_ERROR.
        if rejection != nil || writeErrno != nil { return 0 }
        if roundBytes >= Self.roundBudget {   // the loop's other sources first (Transfers resumes it)
            yielded = true
            return Self.pauseWriting
        }
        if bucket.rate > 0, !bucket.take(length, now: Transfer.now) { return Self.pauseWriting }
        roundBytes += length
        if pendingCount + length > pending.count {
            guard flush() else { return 0 }
        }
        if length > pending.count {
            guard writeAll(UnsafeRawPointer(data), length) else { return 0 }
        } else {
            (pending.baseAddress! + pendingCount).copyMemory(from: data, byteCount: length)
            pendingCount += length
        }
        received += Int64(length)
        bytesThisAttempt += Int64(length)
        return length
    }

    /// Writes the gathered bytes to the staging file. False (and `writeErrno` set) on failure.
    @discardableResult
    func flush() -> Bool {
        guard !isUpload, pendingCount > 0, writeErrno == nil else { return writeErrno == nil }
        let ok = writeAll(UnsafeRawPointer(pending.baseAddress!), pendingCount)
        CrashPoint.reached(.checkpointWritten)
        sinceSpaceCheck += Int64(pendingCount)
        pendingCount = 0
        // Beyond the claimed blocks (a body of unknown length): look at the reserve every few MiB.
        if ok && received > claimedUpTo && sinceSpaceCheck >= 4 << 20 { return reserveSpace(upTo: received) }
        return ok
    }

    private func writeAll(_ p: UnsafeRawPointer, _ length: Int) -> Bool {
        var done = 0
        while done < length {
            let n = Glibc.write(fd, p + done, length - done)
            if n < 0 {
                if errno == EINTR { continue }
                writeErrno = errno
                return false
            }
            done += n
        }
        return true
    }

    /// Forces the written bytes to disk (before a state that must survive a reboot).
    func sync() { if !isUpload { flush(); fsync(fd) } }
}
