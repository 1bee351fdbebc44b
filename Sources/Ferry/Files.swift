import FerryBus
import FerryCore
import Foundation

/// File helpers for apps handling finished downloads: moves that never overwrite, and the
/// user's XDG folders (the same rules as the agent's).
public enum FerryFiles: Sendable {
    /// The user's folder of that kind (XDG user dirs).
    public static var downloadsDirectory: URL { URL(fileURLWithPath: XDG.downloadDirectory, isDirectory: true) }
    /// The user's documents folder (XDG_DOCUMENTS_DIR).
    public static var documentsDirectory: URL { URL(fileURLWithPath: XDG.documentsDirectory, isDirectory: true) }

    /// Moves `file` into `directory` as `name` (default: its own name), never replacing an
    /// existing file: "name (1).ext" and so on. Returns the new location.
    @discardableResult
    public static func move(_ file: URL, into directory: URL, as name: String? = nil) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wanted = FileNaming.sanitize(name ?? file.lastPathComponent) ?? "download"
        let temporary = directory.path + "/.\(wanted).ferry-copy"
        do {
            let path = try NoOverwriteMove.link(file.path, into: directory.path, as: wanted, temporary: temporary)
            unlink(file.path)
            unlink(temporary)
            return URL(fileURLWithPath: path)
        } catch NoOverwriteMove.Failure.noSpace(let dir) {
            throw FerryError(.invalidDestination, "cannot move \(file.path) into \(dir): no space left")
        } catch NoOverwriteMove.Failure.failed(let message) {
            throw FerryError(.invalidDestination, "cannot move \(file.path) into \(directory.path): \(message)")
        }
    }
}
