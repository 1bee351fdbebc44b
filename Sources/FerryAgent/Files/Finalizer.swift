import CFerryShim
import CGLib
import FerryBus
import FerryCore
import FoundationEssentials
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

    /// The folder is not fsynced here: `FinalizeBatches` syncs each folder once per batch.
    /// `confined`: a sandboxed app's file; its folder is opened along the resolved path it was
    /// allowed, no link on the way, and everything happens through that descriptor.
    /// `mode`: the finished file's (the staging file is the agent's, 0600, until then).
    static func finish(
        staging: String, record r: TaskRecord, defaultDirectory: String, confined: Bool,
        mode: mode_t = 0o600
    ) throws -> Saved {
        if let expected = r.sha256 {
            let actual = try sha256(of: staging)
            guard actual == expected.lowercased() else {
                throw Failure(
                    name: "ChecksumMismatch",
                    message: "SHA-256 mismatch: expected \(expected.lowercased()), got \(actual)")
            }
        }
        let asked: String
        let name: String
        if let output = r.output {
            asked = PathName.folder(of: output)
            name = PathName.lastName(of: output)
        } else {
            asked = r.directory ?? defaultDirectory
            name = FileNaming.suggestedFileName(contentDisposition: r.suggestedName, url: r.url)
        }
        // The default folder (the user's Downloads, a download-folder setting) is made at first
        // use, if its parent is there: a missing parent means a drive or share is not.
        if !confined, r.output == nil, r.directory == nil { makeFolder(asked) }
        guard confined else { return try save(staging, r, into: asked, as: name, mode: mode) }
        let pinned: ConfinedFolder
        do { pinned = try ConfinedFolder(asked) } catch let e as FerryError {
            throw Failure(name: "InvalidDestination", message: e.message)
        }
        // Names through the descriptor mean nothing once it is closed: the user's names go out.
        do {
            let saved = try save(staging, r, into: pinned.pinned, as: name, mode: mode)
            return Saved(path: pinned.shown(saved.path), cleanup: saved.cleanup.map(pinned.shown))
        } catch let f as Failure {
            throw Failure(name: f.name, message: f.message.replacing(pinned.pinned, with: asked))
        }
    }

    private static func save(
        _ staging: String, _ r: TaskRecord, into directory: String, as name: String,
        mode: mode_t
    ) throws -> Saved {
        guard let folder = Paths.writableDirectory(directory) else {
            let why = access(directory, F_OK) == 0 ? "is not writable" : "is missing (a drive pulled, a share down?)"
            throw Failure(
                name: "FolderMissing",
                message: "destination folder \(directory) \(why); the finished bytes are kept until it is back")
        }
        let staged = syncFile(staging, mode: mode)
        CrashPoint.reached(.fileSynced)
        let copy = copyName(directory: directory, task: r.id)
        // A crash between link(2) and the commit left the file linked already: it is ours.
        if staged.map({ $0.st_nlink > 1 }) ?? true, let done = alreadyLinked(staging, directory: directory, name: name)
        {
            return Saved(path: done, cleanup: [staging])
        }
        // A copy to another file system (made only there) may have been linked already too.
        let sameDisk = staged.map { $0.st_dev == folder.st_dev } ?? false
        if !sameDisk, let done = alreadyLinked(copy, directory: directory, name: name) {
            return Saved(path: done, cleanup: [staging, copy])
        }
        do {
            let path = try NoOverwriteMove.link(
                staging, into: directory, as: name, temporary: copy, syncDirectory: false)
            CrashPoint.reached(.linkedIntoPlace)
            return Saved(path: path, cleanup: sameDisk ? [staging] : [staging, copy])
        } catch NoOverwriteMove.Failure.noSpace(let dir) {
            throw noSpace(dir)
        } catch NoOverwriteMove.Failure.failed(let message) {
            throw Failure(name: "InvalidDestination", message: message)
        }
    }

    /// The largest file `startWriteback` starts: submitting its writes takes well under a
    /// millisecond, so a batch's big file does not hold its small ones back.
    static let writebackAhead = 4 << 20

    /// Starts writing a small file's pages to disk without waiting for them (a hint: the
    /// fsync in `finish` is what makes it durable), its finished mode set first. Nothing
    /// happens to a file it cannot open.
    /// The mode goes with the writes on purpose: ext4 journals the mode change, and a change
    /// made just before each fsync put every file of a batch in a later journal commit than
    /// the others', so their fsyncs no longer shared one (3,000 small files: -12 % files/s).
    @discardableResult
    static func startWriteback(_ path: String, mode: mode_t? = nil) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size <= writebackAhead else { return false }
        if let mode, st.st_mode & 0o7777 != mode { fchmod(fd, mode) }
        return ferry_start_writeback(fd) == 0
    }

    /// fsync(2) of a file (its mode set first when it is not yet, on the open file: never by
    /// name in the user's folder), and what fstat(2) says of it then (nil: it cannot be opened).
    static func syncFile(_ path: String, mode: mode_t? = nil) -> stat? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        if let mode, st.st_mode & 0o7777 != mode, fchmod(fd, mode) == 0 { st.st_mode = st.st_mode & ~0o7777 | mode }
        fsync(fd)
        return st
    }

    /// mkdir of `folder` (0700) when it is missing and its parent is there.
    private static func makeFolder(_ folder: String) {
        guard access(folder, F_OK) != 0, access(PathName.folder(of: folder), F_OK) == 0 else { return }
        mkdir(folder, 0o700)
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
