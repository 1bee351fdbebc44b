import CGLib
import FerryCore
import Foundation
import Glibc

/// Moves a finished staging file to its destination: never overwriting, never half-written.
/// Runs on the agent's file worker thread (a checksum or a copy takes seconds per GB): it
/// touches only the files it is given.
enum Finalizer {
    struct Failure: Error { var name: String; var message: String }

    /// The final path, and the names the agent removes once the completion is committed
    /// (until then they tell a restarted agent that the file was already linked into place).
    struct Saved { var path: String; var cleanup: [String] }

    /// The hidden copy next to the destination, for another file system (one name per task,
    /// so a restarted agent finds its own).
    static func copyName(directory: String, task: Int64) -> String { directory + "/.ferry-\(task).part" }

    static func finish(staging: String, record r: TaskRecord, defaultDirectory: String) throws -> Saved {
        if let expected = r.sha256 {
            let actual = try sha256(of: staging)
            guard actual == expected.lowercased() else {
                throw Failure(name: "ChecksumMismatch", message: "SHA-256 mismatch: expected \(expected.lowercased()), got \(actual)")
            }
        }
        let directory: String
        let name: String
        if let output = r.output {
            directory = (output as NSString).deletingLastPathComponent
            name = (output as NSString).lastPathComponent
        } else {
            directory = r.directory ?? defaultDirectory
            name = FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: r.url)
        }
        guard Paths.isWritableDirectory(directory) else {
            throw Failure(name: "InvalidDestination", message: "destination folder \(directory) does not exist or is not writable")
        }
        fsyncFile(staging)
        CrashPoint.reached(.fileSynced)
        let copy = copyName(directory: directory, task: r.id)
        // A crash between link(2) and the commit left the file linked already: it is ours.
        if let done = alreadyLinked(staging, directory: directory, name: name) { return Saved(path: done, cleanup: [staging]) }
        if let done = alreadyLinked(copy, directory: directory, name: name) { return Saved(path: done, cleanup: [staging, copy]) }
        // link(2) refuses to replace an existing name: the no-overwrite rule holds even against races.
        for _ in 0..<10_000 {
            let candidate = FileNaming.unique(name) { exists(directory + "/" + $0) }
            let target = directory + "/" + candidate
            if link(staging, target) == 0 {
                fsyncFile(directory)   // the new name survives a power cut before the commit
                CrashPoint.reached(.linkedIntoPlace)
                return Saved(path: target, cleanup: [staging])
            }
            switch errno {
            case EEXIST: continue
            case ENOSPC, EDQUOT:
                throw noSpace(directory)
            case EXDEV, EPERM, ENOTSUP:
                return Saved(path: try copyInto(target: target, from: staging, via: copy), cleanup: [staging, copy])
            default:
                throw Failure(name: "InvalidDestination", message: "cannot create \(target): \(String(cString: strerror(errno)))")
            }
        }
        throw Failure(name: "InvalidDestination", message: "no free file name for \(name) in \(directory)")
    }

    static func noSpace(_ directory: String) -> Failure {
        Failure(name: "NoSpace", message: "not enough space in \(directory) to save the download; its bytes are kept")
    }

    /// The name (or one of its numbered variants) that is a hard link of the staging file.
    static func alreadyLinked(_ staging: String, directory: String, name: String) -> String? {
        var st = stat()
        guard stat(staging, &st) == 0, st.st_nlink > 1 else { return nil }
        for n in 0..<10_000 {
            let candidate = n == 0 ? name : FileNaming.numbered(name, n)
            var other = stat()
            guard lstat(directory + "/" + candidate, &other) == 0 else { return nil }
            if other.st_ino == st.st_ino && other.st_dev == st.st_dev { return directory + "/" + candidate }
        }
        return nil
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Another file system: copy to a hidden temporary next to the target, then link it in.
    /// The temporary stays (a second name of the file) until the agent committed the completion.
    static func copyInto(target: String, from staging: String, via tmp: String) throws -> String {
        let dir = (target as NSString).deletingLastPathComponent
        // Look before writing: a file that cannot fit is not copied half-way first.
        var st = stat(), vfs = statvfs()
        if stat(staging, &st) == 0, statvfs(dir, &vfs) == 0,
           Int64(vfs.f_bavail) * Int64(vfs.f_frsize) < Int64(st.st_size) {
            throw noSpace(dir)
        }
        unlink(tmp)   // a copy a crash interrupted (never linked: alreadyLinked looked first)
        let src = open(staging, O_RDONLY | O_CLOEXEC)
        let dst = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        defer { if src >= 0 { close(src) }; if dst >= 0 { close(dst) } }
        guard src >= 0, dst >= 0 else {
            if dst >= 0 { unlink(tmp) }
            throw Failure(name: "InvalidDestination", message: "cannot write into \(dir): \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(src, $0.baseAddress, $0.count) }
            if n == 0 { break }
            let w = n < 0 ? -1 : buffer.withUnsafeBytes { write(dst, $0.baseAddress, n) }
            if n < 0 || w != n {
                let e = errno; unlink(tmp)
                if e == ENOSPC || e == EDQUOT || (n > 0 && w >= 0) { throw noSpace(dir) }
                throw Failure(name: "InvalidDestination", message: "cannot copy into \(dir): \(String(cString: strerror(e)))")
            }
        }
        if fsync(dst) != 0, errno == ENOSPC || errno == EDQUOT { unlink(tmp); throw noSpace(dir) }
        var name = (target as NSString).lastPathComponent
        var final = target
        while link(tmp, final) != 0 {
            guard errno == EEXIST else { let e = errno; unlink(tmp); throw Failure(name: "InvalidDestination", message: "cannot create \(final): \(String(cString: strerror(e)))") }
            name = FileNaming.unique(name) { exists(dir + "/" + $0) }
            final = dir + "/" + name
        }
        fsyncFile(dir)
        CrashPoint.reached(.linkedIntoPlace)
        return final
    }

    static func fsyncFile(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }

    /// SHA-256 with GLib's GChecksum.
    static func sha256(of path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(name: "Failed", message: "cannot read \(path)") }
        defer { close(fd) }
        let sum = g_checksum_new(G_CHECKSUM_SHA256)
        defer { g_checksum_free(sum) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            buffer.withUnsafeBufferPointer { g_checksum_update(sum, $0.baseAddress, gssize(n)) }
        }
        return String(cString: g_checksum_get_string(sum))
    }
}
