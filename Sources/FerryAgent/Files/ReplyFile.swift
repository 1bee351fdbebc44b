import FerryCore
import Glibc

/// Where an upload's attempt keeps the server's reply: the task's staging file (0600), cut at
/// `TaskRecord.replyLimit` bytes. After a 2xx the core has it moved into the session's inbox
/// like a finished download; any other end discards it with the attempt.
final class ReplyFile {
    private let fd: Int32
    private var length: Int64 = 0
    /// The server sent more than the limit: the rest was dropped.
    private(set) var cut = false

    init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            throw TransferStartFailure(
                errno: e,
                message: "cannot open the file for the upload's reply \(path): \(String(cString: strerror(e)))")
        }
    }

    deinit { close(fd) }

    /// Keeps what fits of a piece of the reply; curl is told every byte was taken.
    func append(_ data: UnsafeRawPointer, _ count: Int) -> Int {
        let room = Int(max(0, TaskRecord.replyLimit - length))
        if count > room { cut = true }
        var done = 0
        while done < min(count, room) {
            let n = write(fd, data + done, min(count, room) - done)
            if n < 0 { if errno == EINTR { continue }; return 0 }  // CURLE_WRITE_ERROR: a retry will do
            done += n
        }
        length += Int64(done)
        return count
    }
}
