// podcast: seed 002's app. Lists an RSS feed's episodes and downloads enclosures through the
// background session dev.ferry.examples.Podcast. If it is killed, the agent finishes the
// downloads and relaunches it (--handle-events) to move the files into the episodes folder.
import ArgumentParser
import Ferry
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct PodcastCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "podcast",
        abstract: "List a podcast feed's episodes, download them in the background.")

    @Argument(help: "The RSS feed's URL.")
    var feed: String?

    @Option(help: "Episodes to download: a number from the list, or 'all'.")
    var download: String?

    @Option(help: "Folder for the episodes (default: Episodes in your documents folder).")
    var episodes: String?

    @Flag(help: .hidden)
    var handleEvents = false

    var episodesFolder: URL {
        episodes.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FerryFiles.documentsDirectory.appendingPathComponent("Episodes", isDirectory: true)
    }

    func validate() throws {
        if !handleEvents && feed == nil { throw ValidationError("give the feed's URL") }
        if let d = download, d != "all", (Int(d) ?? 0) < 1 { throw ValidationError("--download takes a number from the list, or all") }
    }

    /// The session, registered to relaunch this program for its events.
    func openSession(_ app: Podcast) throws -> FerrySession {
        var config = FerrySessionConfiguration.background(withIdentifier: Podcast.sessionIdentifier)
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        config.launchCommand = [exe, "--handle-events", "--episodes", episodesFolder.path]
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return try FerrySession(configuration: config, delegate: app, delegateQueue: queue)
    }

    func run() throws {
        try FileManager.default.createDirectory(at: episodesFolder, withIntermediateDirectories: true)
        if handleEvents || FerryBackgroundLaunch.sessionIdentifier == Podcast.sessionIdentifier {
            try handleBackgroundEvents()
            return
        }
        let list = try FeedParser.parse(try fetch(feed!))
        guard let download else {
            for (i, e) in list.enumerated() {
                let size = e.length.map { " (\($0 / 1_000_000) MB)" } ?? ""
                print("\(i + 1). \(e.title)\(size)  \(e.url.absoluteString)")
            }
            return
        }
        let wanted: [Episode]
        if download == "all" { wanted = list } else {
            let n = Int(download)!
            guard n <= list.count else { throw ValidationError("the feed has \(list.count) episodes") }
            wanted = [list[n - 1]]
        }
        try downloadEpisodes(wanted)
    }

    /// Downloads what is neither on disk nor already in flight, and waits for every transfer.
    func downloadEpisodes(_ wanted: [Episode]) throws {
        let idle = DispatchSemaphore(value: 0)
        let app = Podcast(episodesFolder: episodesFolder, episodes: wanted, onIdle: { idle.signal() })
        let session = try openSession(app)
        // Rebuild the progress buffer: first let a previous run's finished files land on disk…
        session.deliverPendingEvents()
        let folder = episodesFolder
        // … then, on the delegate queue (no callback in between), skip what is on disk or in flight.
        let running = try onQueue(session.delegateQueue) { () throws -> Int in
            for t in try session.allTasks() {
                app.state.withLock { $0.inFlight[t.taskIdentifier] = t.originalRequest.url.absoluteString }
                // A run that died between creating a task and resuming it left it suspended;
                // this app never suspends on purpose.
                if t.state == .suspended { t.resume() }
            }
            let busy = Set(app.state.withLock { $0.inFlight.values })
            for e in wanted {
                let key = e.url.absoluteString
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent(e.fileName).path) {
                    print("\(e.fileName): already downloaded")
                } else if busy.contains(key) {
                    print("\(e.fileName): already downloading")
                } else {
                    let task = try session.downloadTask(with: e.url, description: e.title)
                    app.state.withLock { $0.inFlight[task.taskIdentifier] = key }
                    task.resume()
                }
            }
            return app.state.withLock { $0.inFlight.count }
        }
        if running > 0 {
            print("downloading \(running) episode(s)")
            idle.wait()
        }
        session.disconnect()
        if app.state.withLock({ $0.failures }) > 0 { throw ExitCode(1) }
    }

    /// Relaunched by the agent: take the events, move the files, say we are done, exit.
    func handleBackgroundEvents() throws {
        let idle = DispatchSemaphore(value: 0)
        let app = Podcast(episodesFolder: episodesFolder, onIdle: { idle.signal() })
        let session = try openSession(app)
        if session.deliverPendingEvents(), (try? session.allTasks().isEmpty) ?? false {
            idle.signal()   // nothing left running: the drain callback may already have passed
        }
        idle.wait()
        session.finishedHandlingEvents()   // iOS: the saved completion handler
        session.disconnect()
    }

    /// The feed is small and the user waits for it: fetched directly, not in the background.
    func fetch(_ url: String) throws -> Data {
        guard let u = URL(string: url), ["http", "https", "file"].contains(u.scheme ?? "") else {
            throw ValidationError("not a feed URL: \(url)")
        }
        if u.isFileURL { return try Data(contentsOf: u) }
        let answer = Answer<Data>()
        URLSession.shared.dataTask(with: u) { data, response, error in
            if let error {
                answer.give(.failure(error))
            } else if let http = response as? HTTPURLResponse, http.statusCode != 200 {
                answer.give(.failure(FeedError("the feed server answered HTTP \(http.statusCode)")))
            } else {
                answer.give(.success(data ?? Data()))
            }
        }.resume()
        return try answer.wait()
    }
}

/// A result handed from another thread, waited for.
final class Answer<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, Error>?>(nil)
    private let given = DispatchSemaphore(value: 0)
    func give(_ r: Result<T, Error>) { result.withLock { $0 = r }; given.signal() }
    func wait() throws -> T { given.wait(); return try result.withLock { $0! }.get() }
}

/// Runs `body` on the delegate queue and waits for it (no callback runs in between).
func onQueue<T: Sendable>(_ queue: OperationQueue, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let answer = Answer<T>()
    queue.addOperation { answer.give(Result { try body() }) }
    return try answer.wait()
}
