import FerryCore
import Foundation
import Glibc
import Testing

/// A small tmpfs mounted for one test (a full USB stick, a full home): needs root.
/// Unmounted (lazily) when the test ends.
final class SmallDisk {
    let path: String

    /// Whether this machine lets tests mount file systems (root, not refused by a container).
    static let available: Bool = {
        guard getuid() == 0 else { return false }
        var template = Array("/tmp/ferry-mount-probe-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { return false }
        let dir = String(cString: p)
        defer { rmdir(dir) }
        guard mount("tmpfs", dir, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount2(dir, Int32(MNT_DETACH))
        return true
    }()
    static let skipReason: Comment = "needs root and permission to mount a tmpfs"

    init(at path: String, kilobytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(kilobytes)k,mode=0700") == 0 else {
            throw FerryError(.failed, "cannot mount a tmpfs at \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Frees space the way a user would see it: the disk grows (tmpfs keeps its files).
    func resize(kilobytes: Int) throws {
        guard mount("tmpfs", path, "tmpfs", UInt(MS_REMOUNT), "size=\(kilobytes)k") == 0 else {
            throw FerryError(.failed, "cannot resize the tmpfs at \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Gone, as a USB stick pulled out: unmounted, and its mount point removed (as udisks
    /// removes /media/USER/LABEL).
    func pull() throws {
        guard umount2(path, Int32(MNT_DETACH)) == 0, rmdir(path) == 0 else {
            throw FerryError(.failed, "cannot unmount \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Back, empty (a fresh tmpfs where the stick was).
    func plugIn(kilobytes: Int) throws {
        mkdir(path, 0o700)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(kilobytes)k,mode=0700") == 0 else {
            throw FerryError(.failed, "cannot mount a tmpfs at \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { umount2(path, Int32(MNT_DETACH)) }
}
