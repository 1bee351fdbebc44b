import CCurl
import CFerryShim
import Glibc

/// An upload's body: the file, read by curl from `start`. curl may rewind it (a server that
/// asks for credentials after the body began, an authentication round): the file goes back
/// and the counts with it.
extension Transfer {
    /// The body is the file from byte `start` on (`count` bytes of it; nil: to its end).
    func sendBody(from start: Int64, count: Int64? = nil) {
        lseek(fd, off_t(start), SEEK_SET)
        upload.sendEnd = count.map { start + $0 } ?? .max
        let me = Unmanaged.passUnretained(self).toOpaque()
        ferry_easy_set_read(easy, Transfer.readCallback, me)
        ferry_easy_set_seek(easy, Transfer.seekCallback, me)
    }

    static let readCallback: ferry_data_fn = { data, size, count, user in
        let me = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return me.readBody(data!, size * count)
    }

    /// curl's rewinds are to the body's start (offset 0 of what it was given, SEEK_SET).
    static let seekCallback: ferry_seek_fn = { user, offset, origin in
        let me = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return me.rewind(to: Int64(offset), origin) ? 0 : 2  // CURL_SEEKFUNC_OK, CURL_SEEKFUNC_CANTSEEK
    }

    /// Upload body: the next piece of the file. Progress counts bytes handed to curl.
    private func readBody(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        touch()
        // CURL_READFUNC_PAUSE while the speed limit has no credit
        if pace.bucket.rate > 0, !pace.bucket.hasCredit(now: Transfer.now) { return 0x1000_0001 }
        let room = upload.sendEnd - upload.sent  // `sent` counts from the body's start offset
        guard room > 0 else { return 0 }
        var n: Int
        repeat { n = read(fd, data, Int(min(Int64(length), room))) } while n < 0 && errno == EINTR
        guard n >= 0 else {
            upload.readErrno = errno
            return 0x1000_0000  // CURL_READFUNC_ABORT
        }
        upload.sent += Int64(n)
        bytesThisAttempt += Int64(n)
        pace.bucket.spend(n)
        return n
    }

    private func rewind(to offset: Int64, _ origin: Int32) -> Bool {
        guard origin == SEEK_SET, bytesThisAttempt >= 0 else { return false }
        let position = Int64(lseek(fd, 0, SEEK_CUR))
        let start = position - bytesThisAttempt  // where this attempt's body began
        guard offset >= 0, offset <= bytesThisAttempt, lseek(fd, off_t(start + offset), SEEK_SET) >= 0 else {
            return false
        }
        let back = bytesThisAttempt - offset
        upload.sent -= back
        bytesThisAttempt -= back
        return true
    }
}

/// An upload's file and how much of it curl took (downloads have none: `source` nil, `fd` -1).
struct UploadBody {
    let source: UploadSource?
    /// Bytes handed to curl, from the body's start offset.
    var sent: Int64
    /// The body ends before this byte of the file (a bounded PATCH).
    var sendEnd: Int64 = .max
    /// The file could not be read.
    var readErrno: Int32?

    init(source: UploadSource?, sent: Int64) {
        self.source = source
        self.sent = sent
    }

    var fd: Int32 { source?.fd ?? -1 }
}
