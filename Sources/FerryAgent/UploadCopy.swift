import FerryCore
import FoundationEssentials
import Glibc

/// CreateUploadFromFd's copy: the bytes of a descriptor an app handed over, kept in the agent's
/// own folder (0600, synced before the task is recorded) so that the upload survives the app
/// exiting and the agent restarting. The core removes the copy when the task ends.
enum UploadCopy {
    /// Only a readable regular file: a pipe, socket or device has no known end to copy.
    static func check(_ fd: Int32) throws -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw FerryError(.invalidArgument, "the descriptor to upload is not a regular file")
        }
        let mode = fcntl(fd, F_GETFL) & O_ACCMODE
        guard mode == O_RDONLY || mode == O_RDWR else {
            throw FerryError(.invalidArgument, "the descriptor to upload is not open for reading")
        }
        return Int64(st.st_size)
    }

    /// Copies the whole file (from offset 0; the app's own offset is left alone) into a new
    /// file in `folder`, syncs it, and closes `fd`. Runs on the agent's file worker.
    static func copy(_ fd: Int32, into folder: String) throws -> (path: String, size: Int64) {
        defer { close(fd) }
        guard Paths.mkdirAll(folder, mode: 0o700) else { throw FerryError(.failed, "cannot create \(folder)") }
        let path = folder + UUID().uuidString.lowercased() + ".upload"
        let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw failure("cannot create \(path)") }
        var kept = false
        defer {
            close(out)
            if !kept { unlink(path) }
        }
        var offset: Int64 = 0
        // The kernel copies without a trip through user space; where it cannot, read and write.
        while true {
            var from = off_t(offset)
            let n = sendfile(out, fd, &from, 1 << 30)
            if n > 0 { offset += Int64(n); continue }
            if n == 0 { break }
            guard [EINVAL, ENOSYS, EOPNOTSUPP].contains(errno) else { throw failure("cannot copy the file to upload") }
            offset = try readWrite(fd, out, from: offset)
            break
        }
        guard fsync(out) == 0 else { throw failure("cannot sync the copy of the file to upload") }
        kept = true
        return (path, offset)
    }

    private static func readWrite(_ fd: Int32, _ out: Int32, from start: Int64) throws -> Int64 {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = start
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n == 0 { return offset }
            guard n > 0 else { if errno == EINTR { continue }; throw failure("cannot read the file to upload") }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { write(out, $0.baseAddress! + done, n - done) }
                guard w > 0 else { if errno == EINTR { continue }; throw failure("cannot copy the file to upload") }
                done += w
            }
            offset += Int64(n)
        }
    }

    private static func failure(_ what: String) -> FerryError {
        let e = errno
        return FerryError(e == ENOSPC || e == EDQUOT ? .storeUnavailable : .failed, "\(what): \(String(cString: strerror(e)))")
    }
}
