import CFerryShim
import FerryCore
import FoundationEssentials
import Glibc

/// Copying a file's data and not its holes: a sparse file handed over for upload stays sparse
/// in the agent's copy (1 GiB of holes must not become 1 GiB on the state disk).
enum SparseFile {
    // <unistd.h> has these only under _GNU_SOURCE.
    private static let seekData: Int32 = 3, seekHole: Int32 = 4

    /// The byte ranges of `fd`'s first `size` bytes that hold data (the whole range where the
    /// file system cannot tell).
    static func dataSegments(_ fd: Int32, size: Int64) -> [Range<Int64>] {
        guard size > 0 else { return [] }
        var segments: [Range<Int64>] = []
        var offset: Int64 = 0
        while offset < size {
            let data = lseek(fd, off_t(offset), seekData)
            if data < 0 {
                if errno == ENXIO { break }  // only a hole from here on
                return [0..<size]
            }
            guard Int64(data) < size else { break }
            let hole = lseek(fd, data, seekHole)
            guard hole > data else { return [0..<size] }
            segments.append(Int64(data)..<min(Int64(hole), size))
            offset = Int64(hole)
        }
        return segments
    }

    /// The disk space the files in `folder` occupy (allocated blocks, not sizes).
    static func usage(ofFolder folder: String) -> Int64 {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        return names.reduce(0) { total, name in
            var st = stat()
            guard lstat(folder + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return total }
            return total + Int64(st.st_blocks) * 512
        }
    }

    /// Copies `range` of `from` to the same offsets of `to`; returns the offset reached (short
    /// of the end if `from` ended first). The kernel copies where it can; else read and write.
    static func copy(_ from: Int32, _ to: Int32, _ range: Range<Int64>) throws -> Int64 {
        var offset = range.lowerBound
        while offset < range.upperBound {
            var inOff = offset, outOff = offset
            let n = ferry_copy_file_range(from, &inOff, to, &outOff, UInt(min(range.upperBound - offset, 1 << 30)))
            if n > 0 { offset += Int64(n); continue }
            if n == 0 { return offset }
            if errno == EINTR { continue }
            guard [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP].contains(errno) else {
                throw UploadCopy.failure("cannot copy the file to upload")
            }
            return try readWrite(from, to, offset..<range.upperBound)
        }
        return offset
    }

    private static func readWrite(_ from: Int32, _ to: Int32, _ range: Range<Int64>) throws -> Int64 {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let want = Int(min(Int64(buffer.count), range.upperBound - offset))
            let n = buffer.withUnsafeMutableBytes { pread(from, $0.baseAddress, want, off_t(offset)) }
            if n == 0 { return offset }
            guard n > 0 else {
                if errno == EINTR { continue }; throw UploadCopy.failure("cannot read the file to upload")
            }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes {
                    pwrite(to, $0.baseAddress! + done, n - done, off_t(offset) + off_t(done))
                }
                guard w > 0 else {
                    if errno == EINTR { continue }; throw UploadCopy.failure("cannot copy the file to upload")
                }
                done += w
            }
            offset += Int64(n)
        }
        return offset
    }
}
