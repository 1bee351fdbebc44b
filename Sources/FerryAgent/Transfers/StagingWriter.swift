import CFerryShim
import FerryCore
import Glibc

/// A download's staging file as one attempt writes it. curl hands the body over in pieces;
/// writing each costs a syscall, so they are gathered and written once per socket wake-up
/// (`flush`), up to half of curl's receive buffer at a time (256 kB while few transfers may
/// run: few writes per GiB; little lost if the agent is killed mid-round: bytes still gathered
/// are fetched again; less, or none, when many may run, as the gathered bytes stay resident). The disk's free space is
/// measured for the core, which keeps the state disk's reserve (`SpaceReserve`): at the head
/// (`space`), then every few MiB beyond what was preallocated (`takeMeasuredSpace`). A length
/// the core let in is preallocated (`preallocate`). A failure is kept (`errno`, `message`) for
/// the attempt's outcome.
final class StagingWriter {
    /// Bodies up to this size are not preallocated (see `claim`).
    static let preallocateFrom: Int64 = 1 << 20
    let fd: Int32
    /// Bytes of the entity on disk or gathered (the attempt's offset + what it wrote).
    private(set) var received: Int64
    /// Why writing failed (ENOSPC: which disk is full, in `message`).
    private(set) var errno: Int32?
    private(set) var message: String?
    /// Bytes written since the disk's free space was last measured.
    private var sinceSpaceCheck: Int64 = 0
    /// The free space measured after the last few MiB, not yet handed to the core.
    private var measured: DiskSpace?
    /// Bytes up to here have their disk blocks claimed (no need to look at free space again).
    private var claimedUpTo: Int64 = 0
    private let pending: UnsafeMutableRawBufferPointer
    private var pendingCount = 0

    /// Opens the staging file at `offset` (from the start: truncated; else cut there, as bytes
    /// beyond it are stale); gathers up to half of `receiveBuffer` (curl's) before writing.
    init(path: String, offset: Int64, receiveBuffer: Int) throws {
        // With curl's smallest buffer (many transfers may run, each slowly) a piece is written
        // as it comes: a round brings one or two, and a gathering buffer would stay resident.
        let gather = receiveBuffer / 2 < 2 * ReceiveBuffer.smallest ? 0 : receiveBuffer / 2
        pending = .allocate(byteCount: gather, alignment: 64)
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
    }

    deinit {
        pending.deallocate()
        close(fd)
    }

    /// The free space of the disk the file is on (nil: it cannot be measured).
    func space() -> DiskSpace? {
        var vfs = statvfs()
        guard fstatvfs(fd, &vfs) == 0 else { return nil }
        let unit = Int64(vfs.f_frsize)
        sinceSpaceCheck = 0
        return DiskSpace(available: Int64(vfs.f_bavail) * unit, total: Int64(vfs.f_blocks) * unit)
    }

    /// The space measured after the last few MiB, once.
    func takeMeasuredSpace() -> DiskSpace? {
        defer { measured = nil }
        return measured
    }

    /// Preallocates the bytes still to come up to `length` (FALLOC_FL_KEEP_SIZE: the file's
    /// size keeps saying how much was written), once the core let them in. False, with `errno`
    /// ENOSPC and `message` set, when they do not fit.
    @discardableResult
    func preallocate(upTo length: Int64) -> Bool {
        let remaining = length - received
        sinceSpaceCheck = 0
        // A small body fits in what the core saw free (the reserve stays free after it);
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
        // Beyond the preallocated blocks (a body of unknown length): measured every few MiB,
        // for the core to see (the reserve is its to keep).
        if ok && received > claimedUpTo && sinceSpaceCheck >= 4 << 20, let space = space() { measured = space }
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
