import FerryCore
import Glibc

/// The file an upload sends, opened for one attempt, with what it was when the task was queued
/// (its size, and its modification time in `TaskRecord.lastModified`): a file changed since is
/// refused before a byte is sent, and an attempt during which it changed fails instead of having
/// sent a mix of old and new bytes.
struct UploadSource {
    /// ESTALE marks the refusal for the core (error name FileChanged).
    static let changedErrno: Int32 = ESTALE
    let fd: Int32
    private let size: Int64?
    private let modified: String?

    init(_ record: TaskRecord) throws {
        let path = record.uploadFile ?? ""
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw FerryError(.failed, "cannot read the file to upload \(path): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        size = record.expected
        modified = record.lastModified
        if let why = changed() {
            close(fd)
            throw TransferStartFailure(
                errno: Self.changedErrno,
                message: "the file to upload \(path) changed since it was queued (\(why)): "
                    + "it is not sent; queue it again to send it as it is now")
        }
    }

    /// The modification time as the task keeps it ("seconds.nanoseconds").
    static func stamp(_ st: stat) -> String { "\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)" }

    /// How the open file differs from what was queued (nil: it does not).
    func changed() -> String? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return "it cannot be examined: \(String(cString: strerror(errno)))" }
        if let size, Int64(st.st_size) != size { return "\(size) bytes then, \(st.st_size) now" }
        if let modified, Self.stamp(st) != modified { return "modified since" }
        return nil
    }
}
