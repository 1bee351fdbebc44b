// podcast: seed 002's app. Lists an RSS feed's episodes and downloads enclosures through the
// background session dev.ferry.examples.Podcast. If it is killed, the agent finishes the
// downloads and relaunches it (--handle-events) to move the files into the episodes folder.
import ArgumentParser
import Ferry
import Foundation
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
        let app = Podcast(episodesFolder: episodesFolder)
        for e in wanted { app.episodes[e.url.absoluteString] = e }
        let idle = DispatchSemaphore(value: 0)
        app.onIdle = { idle.signal() }
        let session = try openSession(app)
        // Rebuild the progress buffer: first let a previous run's finished files land on disk…
        session.deliverPendingEvents()
        let queue = session.delegateQueue
        var started = 0
        try queueSync(queue) {
            // … then skip what is on disk or in flight.
            for t in try session.allTasks() {
                app.inFlight[t.taskIdentifier] = t.originalRequest.url.absoluteString
                // A run that died between creating a task and resuming it left it suspended;
                // this app never suspends on purpose.
                if t.state == .suspended { t.resume() }
            }
            let busy = Set(app.inFlight.values)
            for e in wanted {
                let key = e.url.absoluteString
                if FileManager.default.fileExists(atPath: episodesFolder.appendingPathComponent(e.fileName).path) {
                    print("\(e.fileName): already downloaded")
                } else if busy.contains(key) {
                    print("\(e.fileName): already downloading")
                } else {
                    let task = try session.downloadTask(with: e.url, description: e.title)
                    app.inFlight[task.taskIdentifier] = key
                    task.resume()
                    started += 1
                }
            }
        }
        let running = queue.sync { app.inFlight.count }
        if running > 0 {
            print("downloading \(running) episode(s)")
            idle.wait()
        }
        session.disconnect()
        if queue.sync({ app.failures }) > 0 { throw ExitCode(1) }
    }

    /// Relaunched by the agent: take the events, move the files, say we are done, exit.
    func handleBackgroundEvents() throws {
        let app = Podcast(episodesFolder: episodesFolder)
        let idle = DispatchSemaphore(value: 0)
        app.onIdle = { idle.signal() }
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
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<Data, Error> = .failure(FeedError("no answer"))
        URLSession.shared.dataTask(with: u) { data, response, error in
            if let error { result = .failure(error) }
            else if let http = response as? HTTPURLResponse, http.statusCode != 200 {
                result = .failure(FeedError("the feed server answered HTTP \(http.statusCode)"))
            } else { result = .success(data ?? Data()) }
            done.signal()
        }.resume()
        done.wait()
        return try result.get()
    }
}

/// Runs `body` on the delegate queue and waits (the app's state lives there).
func queueSync(_ queue: OperationQueue, _ body: @escaping () throws -> Void) throws {
    nonisolated(unsafe) var failure: Error?
    let op = BlockOperation { do { try body() } catch { failure = error } }
    queue.addOperations([op], waitUntilFinished: true)
    if let failure { throw failure }
}

extension OperationQueue {
    func sync<T>(_ body: @escaping () -> T) -> T {
        nonisolated(unsafe) var value: T?
        addOperations([BlockOperation { value = body() }], waitUntilFinished: true)
        return value!
    }
}
