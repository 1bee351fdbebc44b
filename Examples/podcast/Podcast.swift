import Ferry
import Foundation
import Synchronization

/// The app's state: the progress buffer of seed 002, keyed by enclosure URL, and the handling of
/// finished files. Callbacks come one at a time on the session's delegate queue; the command also
/// reads the state from its own thread, hence the lock.
final class Podcast: FerrySessionDelegate, Sendable {
    static let sessionIdentifier = "dev.ferry.examples.Podcast"

    struct State {
        /// Episodes by URL string (for names and progress lines).
        var episodes: [String: Episode] = [:]
        /// Downloads in flight: task id -> URL string.
        var inFlight: [UInt64: String] = [:]
        var lastPercent: [UInt64: Int] = [:]
        var failures = 0
    }

    let episodesFolder: URL
    let state = Mutex(State())
    /// Called on the delegate queue when a drain of events left no task running.
    let onIdle: @Sendable () -> Void

    init(episodesFolder: URL, episodes: [Episode] = [], onIdle: @escaping @Sendable () -> Void) {
        self.episodesFolder = episodesFolder
        self.onIdle = onIdle
        state.withLock { s in for e in episodes { s.episodes[e.url.absoluteString] = e } }
    }

    func name(for task: FerryTask) -> String {
        let key = task.originalRequest.url.absoluteString
        return state.withLock { $0.episodes[key]?.fileName } ?? task.originalRequest.url.lastPathComponent
    }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?) {
        guard let total = totalBytesExpectedToWrite, total > 0 else { return }
        let percent = Int(totalBytesWritten * 100 / total) / 10 * 10
        let changed = state.withLock { s in
            defer { s.lastPercent[downloadTask.taskIdentifier] = percent }
            return s.lastPercent[downloadTask.taskIdentifier] != percent
        }
        if changed { print("\(name(for: downloadTask)): \(percent)%") }
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
        state.withLock { s in
            s.inFlight[task.taskIdentifier] = nil
            if error != nil { s.failures += 1 }
        }
        if let error { print("\(name(for: task)): failed: \(error.message)") }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: FerrySession) {
        // Seed 002: the completion handler is called once no task is left running.
        if (try? session.allTasks().isEmpty) ?? false { onIdle() }
    }
}
