import CFerryShim
import FerryCore
import Glibc

/// A download's staging file as one attempt writes it. curl hands the body over in 16 kB
/// pieces; writing each costs a syscall, so they are gathered and written once per socket
/// wake-up (`flush`), up to 256 kB at a time (few writes per GiB, and little lost if the agent
/// is killed mid-round: bytes still gathered are fetched again). The state disk's reserve is
/// kept: the announced length is claimed ahead (`claim`), a body of unknown length looked at
/// every few MiB. A failure is kept (`errno`, `message`) for the attempt's outcome.
final class StagingWriter {
    /// Bodies up to this size are not preallocated (see `claim`).
    static let preallocateFrom: Int64 = 1 << 20
    let fd: Int32
    /// Bytes of the entity on disk or gathered (the attempt's offset + what it wrote).
    private(set) var received: Int64
    /// Why writing failed (ENOSPC: which disk is full, in `message`).
    private(set) var errno: Int32?
    private(set) var message: String?
    private let reserve: SpaceReserve
    /// Bytes written since the last look at the state disk's free space.
    private var sinceSpaceCheck: Int64 = 0
    /// Bytes up to here have their disk blocks claimed (no need to look at free space again).
    private var claimedUpTo: Int64 = 0
    private let pending = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 64)
    private var pendingCount = 0

    /// Opens the staging file at `offset` (from the start: truncated; else cut there, as bytes
    /// beyond it are stale).
    init(path: String, offset: Int64, reserve: SpaceReserve) throws {
        // From the start: O_TRUNC (no ftruncate, which costs a journal entry even on an empty file).
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (offset == 0 ? O_TRUNC : 0), 0o600)
        guard fd >= 0 else {
            let e = Glibc.errno
            pending.deallocate()
            throw TransferStartFailure(
                errno: e, message: "cannot open staging file \(path): \(String(cString: strerror(e)))")
        }
        if offset > 0, ftruncate(fd, off_t(offset)) != 0 || lseek(fd, off_t(offset), SEEK_SET) < 0 {
            let e = Glibc.errno
            close(fd)
            pending.deallocate()
            throw TransferStartFailure(
                errno: e, message: "cannot prepare staging file: \(String(cString: strerror(e)))")
        }
        self.fd = fd
        self.received = offset
        self.reserve = reserve
    }

    deinit {
        pending.deallocate()
        close(fd)
    }

    /// Checks the state disk's reserve for the bytes still to come up to `length` and
    /// preallocates them (FALLOC_FL_KEEP_SIZE: the file's size keeps saying how much was
    /// written). False, with `errno` ENOSPC and `message` set, when they do not fit.
    func claim(upTo length: Int64) -> Bool {
        let remaining = length - received
        var vfs = statvfs()
        if fstatvfs(fd, &vfs) == 0 {
            let unit = Int64(vfs.f_frsize)
            let available = Int64(vfs.f_bavail) * unit, total = Int64(vfs.f_blocks) * unit
            guard reserve.allows(writing: remaining, available: available, total: total) else {
                errno = ENOSPC
                message = reserve.refusal(available: available, total: total)
                return false
            }
        }
        sinceSpaceCheck = 0
        // A small body fits in what the check above saw free (the reserve stays free after it);
        // preallocating guards long downloads against space others take meanwhile.
        guard remaining > Self.preallocateFrom else { return true }
        if ferry_preallocate(fd, received, remaining) != 0, Glibc.errno == ENOSPC {
            errno = ENOSPC
            message =
                "no space left for the download's \(remaining) remaining bytes on the disk holding Ferry's state folder"
            return false
        }
        claimedUpTo = length
        return true
    }

    /// Takes a piece of the body; false (and `errno`) when writing failed.
    func append(_ data: UnsafeRawPointer, _ length: Int) -> Bool {
        if pendingCount + length > pending.count {
            guard flush() else { return false }
        }
        if length > pending.count {
            guard writeAll(data, length) else { return false }
        } else {
            (pending.baseAddress! + pendingCount).copyMemory(from: data, byteCount: length)
            pendingCount += length
        }
        received += Int64(length)
        return true
    }

    /// Writes the gathered bytes. False (and `errno` set) on failure.
    @discardableResult
    func flush() -> Bool {
        guard pendingCount > 0, errno == nil else { return errno == nil }
        let ok = writeAll(UnsafeRawPointer(pending.baseAddress!), pendingCount)
        CrashPoint.reached(.checkpointWritten)
        sinceSpaceCheck += Int64(pendingCount)
        pendingCount = 0
        // Beyond the claimed blocks (a body of unknown length): look at the reserve every few MiB.
        if ok && received > claimedUpTo && sinceSpaceCheck >= 4 << 20 { return claim(upTo: received) }
        return ok
    }

    /// Forces the written bytes to disk (before a state that must survive a reboot).
    func sync() {
        flush()
        fsync(fd)
    }

    /// The response starts the entity again: the file from zero. False (and `errno`) on failure.
    func restartFromZero() -> Bool {
        // A file opened at 0 is empty still: nothing to cut.
        if received > 0, ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) < 0 {
            errno = Glibc.errno
            return false
        }
        received = 0
        pendingCount = 0
        return true
    }

    private func writeAll(_ p: UnsafeRawPointer, _ length: Int) -> Bool {
        var done = 0
        while done < length {
            let n = Glibc.write(fd, p + done, length - done)
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                errno = Glibc.errno
                return false
            }
            done += n
        }
        return true
    }
}
