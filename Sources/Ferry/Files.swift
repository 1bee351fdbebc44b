import CGLib
import FerryCore
import Foundation

/// File helpers for apps handling finished downloads: moves that never overwrite, and the
/// user's XDG folders.
public enum FerryFiles {
    /// The user's folder of that kind (XDG user dirs), falling back to the home folder.
    public static var downloadsDirectory: URL { special(G_USER_DIRECTORY_DOWNLOAD, fallback: "Downloads") }
    public static var documentsDirectory: URL { special(G_USER_DIRECTORY_DOCUMENTS, fallback: "Documents") }

    private static func special(_ kind: GUserDirectory, fallback: String) -> URL {
        if let p = g_get_user_special_dir(kind) { return URL(fileURLWithPath: String(cString: p), isDirectory: true) }
        return URL(fileURLWithPath: String(cString: g_get_home_dir()), isDirectory: true).appendingPathComponent(fallback)
    }

    /// Moves `file` into `directory` as `name` (default: its own name), never replacing an
    /// existing file: "name (1).ext" and so on. Returns the new location.
    @discardableResult
    public static func move(_ file: URL, into directory: URL, as name: String? = nil) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wanted = FileNaming.sanitize(name ?? file.lastPathComponent) ?? "download"
        for _ in 0..<64 {
            let unique = FileNaming.unique(wanted) { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
            let target = directory.appendingPathComponent(unique)
            // link(2) fails if the name exists, so a file that appeared meanwhile is never replaced.
            if link(file.path, target.path) == 0 {
                unlink(file.path)
                return target
            }
            if errno == EEXIST { continue }
            if errno == EXDEV || errno == EPERM {
                let tmp = directory.appendingPathComponent(".\(unique).ferry-copy")
                try? FileManager.default.removeItem(at: tmp)
                try FileManager.default.copyItem(at: file, to: tmp)
                if link(tmp.path, target.path) == 0 {
                    unlink(tmp.path)
                    try FileManager.default.removeItem(at: file)
                    return target
                }
                unlink(tmp.path)
                if errno == EEXIST { continue }
            }
            throw FerryError(.invalidDestination, "cannot move \(file.path) into \(directory.path): \(String(cString: strerror(errno)))")
        }
        throw FerryError(.invalidDestination, "cannot find a free name for \(wanted) in \(directory.path)")
    }
}
