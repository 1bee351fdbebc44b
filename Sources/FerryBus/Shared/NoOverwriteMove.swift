import FerryCore
import FoundationEssentials
import Glibc

/// Puts a file into a folder without ever replacing one (the agent saving a download, an app
/// moving it on). link(2) refuses a name that exists, so even a file that appears meanwhile is
/// safe; a taken name becomes "name (1).ext" and so on.
public enum NoOverwriteMove {
    public enum Failure: Error, Equatable {
        case noSpace(directory: String)
        case failed(String)
    }

    /// Links `source` into `directory` as `name` or its first free variant and returns the new
    /// path. Across file systems it first copies to `temporary` (next to the target, fsynced)
    /// and links that. `source` (and `temporary`) stay: callers remove them when they may.
    /// `syncDirectory: false` leaves the folder's fsync to a caller that links several files.
    public static func link(
        _ source: String, into directory: String, as name: String, temporary: String,
        syncDirectory: Bool = true
    ) throws -> String {
        for attempt in 0..<10_000 {
            // The name itself first without looking (link(2) refuses a taken one), then free variants.
            let target =
                directory + "/" + (attempt == 0 ? name : FileNaming.unique(name) { exists(directory + "/" + $0) })
            if Glibc.link(source, target) == 0 {
                if syncDirectory { fsyncPath(directory) }  // the new name survives a power cut
                return target
            }
            switch errno {
            case EEXIST: continue
            case ENOSPC, EDQUOT: throw Failure.noSpace(directory: directory)
            case EXDEV, EPERM, ENOTSUP:
                return try copy(source, to: target, via: temporary, syncDirectory: syncDirectory)
            default: throw Failure.failed("cannot create \(target): \(String(cString: strerror(errno)))")
            }
        }
        throw Failure.failed("no free file name for \(name) in \(directory)")
    }

    /// Another file system: copy to a hidden temporary next to the target, then link it in.
    static func copy(_ source: String, to target: String, via tmp: String, syncDirectory: Bool) throws -> String {
        let dir = PathName.folder(of: target)
        // Look before writing: a file that cannot fit is not copied half-way first.
        var st = stat(), vfs = statvfs()
        if stat(source, &st) == 0, statvfs(dir, &vfs) == 0,
            Int64(vfs.f_bavail) * Int64(vfs.f_frsize) < Int64(st.st_size)
        {
            throw Failure.noSpace(directory: dir)
        }
        unlink(tmp)  // a copy a crash interrupted
        let src = open(source, O_RDONLY | O_CLOEXEC)
        let dst = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        defer { if src >= 0 { close(src) }; if dst >= 0 { close(dst) } }
        if dst >= 0, st.st_mode != 0 { fchmod(dst, st.st_mode & 0o777) }  // the copy keeps the file's mode
        guard src >= 0, dst >= 0 else {
            if dst >= 0 { unlink(tmp) }
            throw Failure.failed("cannot write into \(dir): \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(src, $0.baseAddress, $0.count) }
            if n == 0 { break }
            let w = n < 0 ? -1 : buffer.withUnsafeBytes { write(dst, $0.baseAddress, n) }
            if n < 0 || w != n {
                let e = errno
                unlink(tmp)
                if e == ENOSPC || e == EDQUOT || (n > 0 && w >= 0) { throw Failure.noSpace(directory: dir) }
                throw Failure.failed("cannot copy into \(dir): \(String(cString: strerror(e)))")
            }
        }
        if fsync(dst) != 0, errno == ENOSPC || errno == EDQUOT { unlink(tmp); throw Failure.noSpace(directory: dir) }
        var name = PathName.lastName(of: target)
        var final = target
        while Glibc.link(tmp, final) != 0 {
            guard errno == EEXIST else {
                let e = errno
                unlink(tmp)
                throw Failure.failed("cannot create \(final): \(String(cString: strerror(e)))")
            }
            name = FileNaming.unique(name) { exists(dir + "/" + $0) }
            final = dir + "/" + name
        }
        if syncDirectory { fsyncPath(dir) }
        return final
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    public static func fsyncPath(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
