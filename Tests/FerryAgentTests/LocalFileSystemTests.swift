import CFerryShim
import FerryCore
import Glibc
import Testing
@testable import FerryAgent

/// Which staging folders let the loop create files itself (see `Transfers.start`).
@Suite struct LocalFileSystemTests {
    @Test func theDisksOfThisMachineAreLocalAndFileServersAreNot() {
        #expect(LocalFileSystem.isLocal(type: 0xEF53), "ext4")
        #expect(LocalFileSystem.isLocal(type: 0x0102_1994), "tmpfs")
        #expect(!LocalFileSystem.isLocal(type: 0x6969), "NFS")
        #expect(!LocalFileSystem.isLocal(type: 0xFF53_4D42), "CIFS")
        #expect(!LocalFileSystem.isLocal(type: 0xFE53_4D42), "SMB2")
        #expect(!LocalFileSystem.isLocal(type: 0x6573_5546), "FUSE")
        #expect(!LocalFileSystem.isLocal(type: -1), "a folder that could not be examined")
    }

    @Test func aFolderIsExaminedWhereItIs() {
        #expect(LocalFileSystem.holds("/tmp"), "the temporary folder is on a disk of this machine")
        #expect(!LocalFileSystem.holds("/proc/self"), "procfs holds no files of ours")
        #expect(!LocalFileSystem.holds("/tmp/ferry-no-such-folder/staging"))
    }
}

/// A batch's small files get their writes started before the fsyncs (see `FinalizeBatches`).
@Suite struct WritebackTests {
    /// A file of `size` bytes written in a fresh folder of the temporary one (a disk here).
    static func written(_ size: Int) throws -> (path: String, fd: Int32) {
        var template = Array("/tmp/ferry-writeback-XXXXXX".utf8CString)
        guard let folder = mkdtemp(&template) else { throw FerryError(.failed, "mkdtemp") }
        let path = String(cString: folder) + "/f"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let bytes = [UInt8](repeating: 7, count: size)
        guard fd >= 0, write(fd, bytes, size) == size else { throw FerryError(.failed, "cannot write \(path)") }
        return (path, fd)
    }

    static func remove(_ f: (path: String, fd: Int32)) {
        close(f.fd)
        unlink(f.path)
        rmdir(String(f.path.dropLast(2)))
    }

    /// cachestat(2) sees dirty pages of a file just written in the temporary folder (not so on
    /// tmpfs or a kernel before 6.5).
    static let observable: Bool = {
        guard let f = try? written(64 << 10) else { return false }
        defer { remove(f) }
        return ferry_dirty_pages(f.fd) > 0
    }()

    @Test(.enabled(if: observable, "needs cachestat(2) (Linux 6.5) and a temporary folder on a disk"))
    func aSmallFilesWritesStartAndABigFileIsLeftToItsFsync() throws {
        let small = try Self.written(256 << 10)
        defer { Self.remove(small) }
        let dirty = ferry_dirty_pages(small.fd)
        #expect(dirty > 0)
        #expect(Finalizer.startWriteback(small.path))
        #expect(ferry_dirty_pages(small.fd) < dirty, "its pages were handed to the disk")

        let big = try Self.written(Finalizer.writebackAhead + 4096)
        defer { Self.remove(big) }
        let bigDirty = ferry_dirty_pages(big.fd)
        #expect(!Finalizer.startWriteback(big.path))
        #expect(ferry_dirty_pages(big.fd) == bigDirty, "a big file's writes wait for its own fsync")
        #expect(!Finalizer.startWriteback(small.path + ".missing"))
    }
}
