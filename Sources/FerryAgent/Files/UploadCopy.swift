import Dispatch
import FerryCore
import FoundationEssentials
import Glibc

/// CreateUploadFromFd's copy: the bytes of a descriptor an app handed over, kept in the agent's
/// own folder (0600, synced before the task is recorded) so that the upload survives the app
/// exiting and the agent restarting. The core removes the copy when the task ends.
///
/// Copies run one at a time per owner on a queue of their own (never the one that saves finished
/// downloads), so the owner's usage measured before a copy is what it holds, and a copy whose
/// reads block holds up only its owner's. Only the size seen
/// when the call came is copied (a growing file cannot hold the queue), holes stay holes, and
/// the copy must fit the owner's limit and leave the state disk's reserve free.
enum UploadCopy {
    /// One queue of copies per owner (an app id; "" for the host's programs), made on the loop:
    /// a file whose reads block (a hung network mount, a FUSE file) holds only its owner's
    /// copies, never another app's or the host's.
    final class Queues {
        private var queues: [String: DispatchQueue] = [:]
        func queue(_ owner: String) -> DispatchQueue {
            if let q = queues[owner] { return q }
            let q = DispatchQueue(label: "dev.ferry.agent.upload-copies." + (owner.isEmpty ? "host" : owner))
            queues[owner] = q
            return q
        }
    }

    /// Only a readable regular file: a pipe, socket or device has no known end to copy.
    /// Returns its size now, which is what will be copied.
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

    /// What a copy must respect.
    struct Rules {
        var limits: UploadCopyLimits
        var reserve: SpaceReserve
        /// The owner, as its limit's refusal names it.
        var owner: String
    }

    /// Copies the first `size` bytes of `fd` (from offset 0; the app's own offset is left alone)
    /// into a new file in `folder` (the owner's), syncs it, and closes `fd`.
    static func copy(
        _ fd: Int32, size: Int64, into folder: String, _ rules: Rules
    ) throws -> (path: String, size: Int64) {
        defer { close(fd) }
        guard Paths.mkdirAll(folder, mode: 0o700) else { throw FerryError(.failed, "cannot create \(folder)") }
        let segments = SparseFile.dataSegments(fd, size: size)
        let data = segments.reduce(Int64(0)) { $0 + ($1.upperBound - $1.lowerBound) }
        try rules.limits.admit(data: data, held: SparseFile.usage(ofFolder: folder), owner: rules.owner)
        var disk = statvfs()
        if statvfs(folder, &disk) == 0 {
            let available = Int64(disk.f_bavail) * Int64(disk.f_frsize),
                total = Int64(disk.f_blocks) * Int64(disk.f_frsize)
            guard rules.reserve.allows(writing: data, available: available, total: total) else {
                throw FerryError(
                    .storeUnavailable,
                    "no room to keep a copy of the file to upload: "
                        + rules.reserve.refusal(available: available, total: total))
            }
        }
        let path = folder + UUID().uuidString.lowercased() + ".upload"
        let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw failure("cannot create \(path)") }
        var kept = false
        defer {
            close(out)
            if !kept { unlink(path) }
        }
        var end = size  // a hole at the end stays a hole
        for segment in segments {
            let reached = try SparseFile.copy(fd, out, segment)
            if reached < segment.upperBound { end = reached; break }  // the file shrank meanwhile: it ends here
        }
        guard ftruncate(out, off_t(end)) == 0, fsync(out) == 0 else {
            throw failure("cannot sync the copy of the file to upload")
        }
        kept = true
        return (path, end)
    }

    static func failure(_ what: String) -> FerryError {
        let e = errno
        return FerryError(
            e == ENOSPC || e == EDQUOT ? .storeUnavailable : .failed, "\(what): \(String(cString: strerror(e)))")
    }
}
