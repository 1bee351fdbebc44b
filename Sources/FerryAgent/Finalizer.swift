import CGLib
import FerryCore
import Foundation
import Glibc

/// Moves a finished staging file to its destination: never overwriting, never half-written.
enum Finalizer {
    struct Failure: Error { var name: String; var message: String }

    /// Returns the final path.
    static func finish(staging: String, record r: TaskRecord, defaultDirectory: String) throws -> String {
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
        // link(2) refuses to replace an existing name: the no-overwrite rule holds even against races.
        for _ in 0..<10_000 {
            let candidate = FileNaming.unique(name) { exists(directory + "/" + $0) }
            let target = directory + "/" + candidate
            if link(staging, target) == 0 {
                unlink(staging)
                return target
            }
            switch errno {
            case EEXIST: continue
            case EXDEV, EPERM, ENOTSUP:
                return try copyInto(target: target, from: staging)
            default:
                throw Failure(name: "InvalidDestination", message: "cannot create \(target): \(String(cString: strerror(errno)))")
            }
        }
        throw Failure(name: "InvalidDestination", message: "no free file name for \(name) in \(directory)")
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Another file system: copy to a hidden temporary next to the target, then link it in.
    static func copyInto(target: String, from staging: String) throws -> String {
        let dir = (target as NSString).deletingLastPathComponent
        let tmp = dir + "/.ferry-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).part"
        let src = open(staging, O_RDONLY | O_CLOEXEC)
        let dst = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
                throw Failure(name: e == ENOSPC ? "DiskFull" : "InvalidDestination", message: "cannot copy into \(dir): \(String(cString: strerror(e)))")
            }
        }
        fsync(dst)
        var name = (target as NSString).lastPathComponent
        var final = target
        while link(tmp, final) != 0 {
            guard errno == EEXIST else { let e = errno; unlink(tmp); throw Failure(name: "InvalidDestination", message: "cannot create \(final): \(String(cString: strerror(e)))") }
            name = FileNaming.unique(name) { exists(dir + "/" + $0) }
            final = dir + "/" + name
        }
        unlink(tmp)
        unlink(staging)
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
