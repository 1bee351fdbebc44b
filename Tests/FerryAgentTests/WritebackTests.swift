import CFerryShim
import FerryCore
import Glibc
import Testing
@testable import FerryAgent

/// A finalize batch starts the writes of its small files before the fsyncs (see `FinalizeBatches`).
@Suite struct WritebackTests {
    /// A file just written (its pages dirty in memory) in a fresh folder of the temporary one.
    struct Written {
        var folder: String, path: String, fd: Int32

        init(_ size: Int) throws {
            var template = Array("/tmp/ferry-writeback-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw FerryError(.failed, "mkdtemp") }
            folder = String(cString: made)
            path = folder + "/f"
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            let bytes = [UInt8](repeating: 7, count: size)
            guard fd >= 0, write(fd, bytes, size) == size else { throw FerryError(.failed, "cannot write \(path)") }
        }

        var dirtyPages: Int { ferry_dirty_pages(fd) }

        func remove() {
            close(fd)
            unlink(path)
            rmdir(folder)
        }
    }

    /// cachestat(2) sees the dirty pages of a file just written in the temporary folder (not so
    /// on tmpfs, or before Linux 6.5).
    static let observable: Bool = {
        guard let f = try? Written(64 << 10) else { return false }
        defer { f.remove() }
        return f.dirtyPages > 0
    }()

    @Test(.enabled(if: observable, "needs cachestat(2) (Linux 6.5) and a temporary folder on a disk"))
    func aSmallFilesWritesStartAndABigFileIsLeftToItsFsync() throws {
        // The kernel's own flusher may write a file out first (other tests write a lot): take
        // one whose pages are still dirty.
        var small = try Written(256 << 10)
        for _ in 0..<5 where small.dirtyPages <= 0 {
            small.remove()
            small = try Written(256 << 10)
        }
        defer { small.remove() }
        let dirty = small.dirtyPages
        try #require(dirty > 0)
        #expect(Finalizer.startWriteback(small.path))
        #expect(small.dirtyPages < dirty, "its pages were handed to the disk")

        let big = try Written(Finalizer.writebackAhead + 4096)
        defer { big.remove() }
        #expect(!Finalizer.startWriteback(big.path), "a big file's writes wait for its own fsync")
        #expect(!Finalizer.startWriteback(small.path + ".missing"))
    }
}
