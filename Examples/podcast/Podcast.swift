import Foundation
import Ferry

/// The app's state, touched only on the session's delegate queue: the progress buffer of
/// seed 002, keyed by enclosure URL, and the handling of finished files.
final class Podcast: FerrySessionDelegate, @unchecked Sendable {
    static let sessionIdentifier = "dev.ferry.examples.Podcast"

    let episodesFolder: URL
    /// Episodes by URL string (for names and progress lines).
    var episodes: [String: Episode] = [:]
    /// Downloads in flight: task id -> URL string.
    var inFlight: [UInt64: String] = [:]
    var lastPercent: [UInt64: Int] = [:]
    var failures = 0
    /// Called on the delegate queue when a drain of events left no task running.
    var onIdle: () -> Void = {}

    init(episodesFolder: URL) { self.episodesFolder = episodesFolder }

    func name(for task: FerryTask) -> String {
        let key = task.originalRequest.url.absoluteString
        return episodes[key]?.fileName ?? task.originalRequest.url.lastPathComponent
    }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?) {
        guard let total = totalBytesExpectedToWrite, total > 0 else { return }
        let percent = Int(totalBytesWritten * 100 / total) / 10 * 10
        guard lastPercent[downloadTask.taskIdentifier] != percent else { return }
        lastPercent[downloadTask.taskIdentifier] = percent
        print("\(name(for: downloadTask)): \(percent)%")
    }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didFinishDownloadingTo location: URL) {
        // Moved under the enclosure's file name, never over an existing file.
        do {
            let file = try FerryFiles.move(location, into: episodesFolder, as: name(for: downloadTask))
            print("\(file.lastPathComponent): saved in \(episodesFolder.path)")
        } catch {
            print("\(name(for: downloadTask)): cannot save: \(error)")
        }
    }

    func urlSession(_ session: FerrySession, task: FerryTask, didCompleteWithError error: FerryTaskError?) {
        inFlight[task.taskIdentifier] = nil
        if let error {
            failures += 1
            print("\(name(for: task)): failed: \(error.message)")
        }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: FerrySession) {
        // Seed 002: the completion handler is called once no task is left running.
        if (try? session.allTasks().isEmpty) ?? false { onIdle() }
    }
}
