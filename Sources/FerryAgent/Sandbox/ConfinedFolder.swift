import CFerryShim
import FerryCore
import Glibc

/// A folder a sandboxed app's file goes to, opened when it is used, never trusted from the
/// check made when the app asked. The app owns the folders on the way and may swap any of them
/// for a symbolic link at any time; the path it was allowed was stored resolved (no links in
/// it), so opening it with openat2's RESOLVE_NO_SYMLINKS reaches that folder or fails. Work
/// then goes through the descriptor (`/proc/self/fd/N/…` names resolve through it), so a swap
/// after the open changes nothing.
final class ConfinedFolder {
    let fd: Int32
    /// The folder's name as the user sees it.
    let path: String
    /// A name that reaches the folder through the descriptor, for calls that take paths.
    var pinned: String { "/proc/self/fd/\(fd)" }

    /// Opens the resolved folder `path`, refusing a link anywhere on the way.
    init(_ path: String) throws {
        let fd = ferry_openat2(AT_FDCWD, path, Self.pathOnly | O_DIRECTORY | O_CLOEXEC, 0, ferry_resolve_no_links())
        guard fd >= 0 else { throw Self.refusal(path, errno) }
        self.fd = fd
        self.path = path
    }

    /// Opens `path`, making the folders missing below `base` (0700) one at a time, each
    /// beneath the last and never through a link.
    init(_ path: String, creatingBelow base: String) throws {
        guard path.hasPrefix(base + "/") else { throw FerryError(.failed, "\(path) is not inside \(base)") }
        var fd = ferry_openat2(AT_FDCWD, base, Self.pathOnly | O_DIRECTORY | O_CLOEXEC, 0, ferry_resolve_no_links())
        guard fd >= 0 else { throw Self.refusal(base, errno) }
        for name in path.dropFirst(base.count + 1).split(separator: "/") {
            mkdirat(fd, String(name), 0o700)  // EEXIST: there already (perhaps as a link, refused next)
            let next = ferry_openat2(
                fd, String(name), Self.pathOnly | O_DIRECTORY | O_CLOEXEC, 0,
                ferry_resolve_no_links() | ferry_resolve_beneath())
            let e = errno
            close(fd)
            guard next >= 0 else { throw Self.refusal(path, e) }
            fd = next
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// O_PATH (a Linux flag Glibc's Swift module leaves out): the folder's place, not its contents.
    private static let pathOnly: Int32 = 0o10_000_000

    /// Removes a file; `confined`: through its folder opened with no link on the way, so a
    /// folder an app swapped for a link leads to no file of the host's. Why it was not: nil when
    /// removed (or already gone).
    static func remove(_ file: String, confined: Bool) -> String? {
        guard confined else { unlink(file); return nil }
        let slash = file.lastIndex(of: "/") ?? file.startIndex
        let (folder, name) = (String(file[..<slash]), String(file[file.index(after: slash)...]))
        do {
            let pinned = try ConfinedFolder(folder.isEmpty ? "/" : folder)
            guard unlinkat(pinned.fd, name, 0) == 0 || errno == ENOENT else { return String(cString: strerror(errno)) }
            return nil
        } catch let e as FerryError {
            return e.message
        } catch {
            return "\(error)"
        }
    }

    /// `pinned`-based path → the user's name for it.
    func shown(_ pinnedPath: String) -> String {
        pinnedPath.hasPrefix(pinned) ? path + pinnedPath.dropFirst(pinned.count) : pinnedPath
    }

    private static func refusal(_ path: String, _ e: Int32) -> FerryError {
        e == ELOOP || e == EXDEV || e == ENOTDIR
            ? FerryError(
                .invalidDestination,
                "the folder \(path) was replaced by a link (or a file) since it was allowed; a sandboxed app's files "
                    + "go only where its sandbox lets it write"
            )
            : FerryError(.invalidDestination, "cannot open the folder \(path): \(String(cString: strerror(e)))")
    }
}
