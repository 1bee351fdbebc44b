import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// What a crash may leave behind, cleaned up when the agent starts.
extension Agent {
    /// A crash after a completion was committed leaves its staging name (and a copy's hidden
    /// second name next to the file): the file itself is in place, these go. Returns the tasks
    /// whose staged bytes stay (nil: the folder cannot be read).
    func removeLeftoversOfCompletedTasks() -> Set<Int64>? {
        let staging = state.staging
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: staging) else { return nil }
        var staged: Set<Int64> = []
        for name in names where name.hasSuffix(".part") {
            guard let id = Int64(name.dropLast(5)) else { continue }
            guard let r = try? store.task(id), r.state == .completed else { staged.insert(id); continue }
            unlink(state.staged(id))
            if let file = r.file { unlink(Finalizer.copyName(directory: PathName.folder(of: file), task: id)) }
        }
        return staged
    }

    /// The tasks with bytes in staging, by their files' names.
    func stagedTaskIDs() -> Set<Int64> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: state.staging)) ?? []
        return Set(names.filter { $0.hasSuffix(".part") }.compactMap { Int64($0.dropLast(5)) })
    }

    /// Copies of descriptors handed over for upload that no unfinished task uses: the agent
    /// stopped while copying, or before the task's end removed its copy. They count against
    /// their owner's limit, so they go.
    func removeUnusedUploadCopies() throws {
        let inUse = try store.uploadFilesInUse(under: state.uploads)
        guard let names = try? FileManager.default.subpathsOfDirectory(atPath: state.uploads) else { return }
        for name in names where name.hasSuffix(".upload") {
            let path = state.uploads + name
            if !inUse.contains(path) { unlink(path) }
        }
    }
}
