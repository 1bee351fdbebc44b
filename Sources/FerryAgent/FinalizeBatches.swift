import Dispatch
import FerryBus
import FerryCore

/// Finishes downloaded files on the file worker in batches: each file is verified, fsynced and
/// linked into place, then every folder that received one is fsynced once, and the results go
/// back to the loop together (one turn, one commit). Files that finish while the worker is busy
/// wait for the next batch, so under load a folder's fsync and the store's commit are shared.
final class FinalizeBatches: @unchecked Sendable {   // its lists are touched only on `worker`
    struct Job { var record: TaskRecord; var staging: String; var defaultDirectory: String }

    private let worker: DispatchQueue
    private let deliver: ([(Int64, FinalizeResult)]) -> Void
    private var waiting: [Job] = []
    private var scheduled = false

    /// `deliver` runs on the loop.
    init(worker: DispatchQueue, deliver: @escaping ([(Int64, FinalizeResult)]) -> Void) {
        self.worker = worker
        self.deliver = deliver
    }

    func add(_ job: Job) {
        worker.async { [self] in
            waiting.append(job)
            guard !scheduled else { return }
            scheduled = true
            worker.async { [self] in runBatch() }   // after the jobs already queued
        }
    }

    private func runBatch() {
        let jobs = waiting
        waiting = []
        scheduled = false
        var folders: [String] = []
        let results = jobs.map { job -> (Int64, FinalizeResult) in
            let result = Self.finish(job)
            if case .saved(let path, _) = result {
                let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
                if !folders.contains(folder) { folders.append(folder) }
            }
            return (job.record.id, result)
        }
        for folder in folders { NoOverwriteMove.fsyncPath(folder) }   // the new names survive a power cut
        let deliver = deliver
        MainLoop.idle { deliver(results) }
    }

    private static func finish(_ job: Job) -> FinalizeResult {
        do {
            let saved = try Finalizer.finish(staging: job.staging, record: job.record, defaultDirectory: job.defaultDirectory)
            return .saved(path: saved.path, cleanup: saved.cleanup)
        } catch let f as Finalizer.Failure {
            switch f.name {
            case "NoSpace": return .noSpace(f.message)
            case "ChecksumMismatch": return .checksumMismatch(f.message)
            default: return .failed(name: f.name, message: f.message)
            }
        } catch {
            return .failed(name: "Failed", message: "\(error)")
        }
    }
}
