import FerryBus
import FerryCore
import Foundation

/// A background session (URLSession with a background configuration). The agent owns its
/// transfers; this object creates tasks and delivers the session's events, exactly once each
/// and in order, to the delegate on the delegate queue, or to `events` when there is no delegate.
/// Creating a session whose identifier exists reconnects to it and replays its pending events.
public final class FerrySession: @unchecked Sendable {
    /// What the session was opened with.
    public let configuration: FerrySessionConfiguration
    /// Gets the events; nil hands them to ``events``.
    public let delegate: FerrySessionDelegate?
    /// Callbacks run here (a serial queue when the app gave none).
    public let delegateQueue: OperationQueue
    /// The events, for async code; only for a session made without a delegate.
    public var events: FerryEvents { FerryEvents(mailbox: mailbox) }

    let client: BusClient
    /// The agent's API over `client`.
    var agent: AgentProxy { AgentProxy(client) }
    let mailbox = EventMailbox()
    /// The tasks `async` calls wait on (Session+Async.swift).
    let awaited = AwaitedTasks()
    let inbox: URL
    private let lock = NSLock()
    private var taskObjects: [UInt64: FerryTask] = [:]
    var signals: SignalThread?
    // Delivery state (SessionDelivery.swift): only touched on `pump`.
    let pump = DispatchQueue(label: "dev.ferry.session.pump")
    var pumping = false
    var stopped = false
    var durableSinceDrain = false
    /// The identifier was released in the ledger (pump queue, or deinit).
    var closed = false

    /// Connects to the agent (starting it through D-Bus activation if needed) and opens the session.
    public init(
        configuration: FerrySessionConfiguration, delegate: FerrySessionDelegate?,
        delegateQueue: OperationQueue? = nil
    ) throws {
        self.configuration = configuration
        self.delegate = delegate
        if let delegateQueue {
            self.delegateQueue = delegateQueue
        } else {
            let q = OperationQueue()
            q.maxConcurrentOperationCount = 1
            q.name = "dev.ferry.session.delegate"
            self.delegateQueue = q
        }
        // One live object per identifier, or both would show the same events.
        guard DeliveryLedger.shared.open(configuration.identifier) else {
            throw FerryError(
                .invalidState,
                "session '\(configuration.identifier)' is already open in this process: use that object, or "
                    + "disconnect() it first"
            )
        }
        // A connection of its own: the agent counts the session as connected while it is open.
        do {
            client = try BusClient(address: configuration.busAddress ?? BusClient.sessionBusAddress())
        } catch {
            DeliveryLedger.shared.close(configuration.identifier)
            throw error
        }
        if let d = configuration.defaultDestination {
            try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        }
        let opened: OpenedSession
        do {
            opened = try AgentProxy(client).openSession(
                identifier: configuration.identifier, configuration: Self.options(configuration))
        } catch {
            DeliveryLedger.shared.close(configuration.identifier)
            throw error
        }
        let inbox = opened.inbox
        guard !inbox.isEmpty else {
            DeliveryLedger.shared.close(configuration.identifier)
            throw FerryError(.failed, "the agent is too old for this library (OpenSession gave no inbox)")
        }
        self.inbox = URL(fileURLWithPath: inbox, isDirectory: true)
        // The agent never reuses a sequence number; one below what this process saw means its
        // state was reset, so the numbers start again.
        DeliveryLedger.shared.reconcile(
            configuration.identifier,
            latest: opened.latestSeq)
        signals = SignalThread(
            client: client, session: configuration.identifier,
            onSignal: { [weak self] in self?.kick() },
            onAgentStarted: { [weak self] in self?.reopen() })
        kick()
    }

    /// A session whose events are read from `events`.
    public convenience init(configuration: FerrySessionConfiguration) throws {
        try self.init(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    deinit {
        signals?.stop()
        if !closed { DeliveryLedger.shared.close(configuration.identifier) }
    }

    static func options(_ c: FerrySessionConfiguration) -> SessionOptions {
        var o = SessionOptions()
        o.launchCommand = Sandbox.isSandboxed ? nil : c.launchCommand  // refused there: it would run outside
        o.relaunch = c.sessionSendsLaunchEvents
        o.discretionary = c.isDiscretionary
        o.allowMetered = c.allowsMeteredNetworkAccess
        o.perHostLimit = c.httpMaximumConnectionsPerHost
        o.cookies = c.httpShouldSetCookies
        o.maxRate = c.maximumBytesPerSecond
        o.requestTimeout = Int(c.timeoutIntervalForRequest)
        o.resourceTimeout = Int(c.timeoutIntervalForResource)
        o.popups = c.showsNotifications
        o.keepEvents = true
        o.defaultDirectory = c.defaultDestination?.path
        return o
    }

    // MARK: - Tasks

    /// A download of `url` (GET), created suspended: call `resume()`. `description` is the
    /// task's free text (URLSessionTask.taskDescription), shown to the user in the Downloads window.
    public func downloadTask(with url: URL, description: String = "") throws -> FerryDownloadTask {
        try downloadTask(with: FerryRequest(url: url), description: description)
    }

    /// A download, created suspended: call `resume()`.
    public func downloadTask(with request: FerryRequest, description: String = "") throws -> FerryDownloadTask {
        var options = taskOptions(request, description: description)
        options.directory = inbox.path
        let id = try agent.createDownload(
            session: configuration.identifier, url: request.url.absoluteString, options: options)
        return register(
            FerryDownloadTask(
                id: UInt64(id), request: request, description: description,
                state: .suspended, session: self))
    }

    /// Continues a canceled or failed download from its resume data (only missing bytes are fetched).
    /// Garbage or foreign data throws InvalidResumeData.
    public func downloadTask(withResumeData data: Data, description: String = "") throws -> FerryDownloadTask {
        let decoded = try ResumeData.decode([UInt8](data))
        var options = TaskOptions()
        options.paused = true
        options.directory = inbox.path
        if !description.isEmpty { options.description = description }
        let id = try agent.createDownloadFromResumeData(
            session: configuration.identifier, resumeData: [UInt8](data), options: options)
        let url = URL(string: decoded.url) ?? URL(fileURLWithPath: "/")
        return register(
            FerryDownloadTask(
                id: UInt64(id), request: FerryRequest(url: url),
                description: description, state: .suspended, session: self))
    }

    /// An upload of `file` as the request body, created suspended: call `resume()`.
    public func uploadTask(
        with request: FerryRequest, fromFile file: URL, description: String = ""
    ) throws -> FerryUploadTask {
        let options = taskOptions(request, description: description), url = request.url.absoluteString
        let id: Int64
        if configuration.uploadsByDescriptor {
            let fd = open(file.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw FerryError(.invalidArgument, "cannot upload \(file.path): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            id = try agent.createUploadFromFd(session: configuration.identifier, url: url, fd: fd, options: options)
        } else {
            id = try agent.createUpload(session: configuration.identifier, url: url, file: file.path, options: options)
        }
        return register(
            FerryUploadTask(
                id: UInt64(id), request: request, description: description,
                state: .suspended, session: self))
    }

    private func taskOptions(_ request: FerryRequest, description: String) -> TaskOptions {
        var o = TaskOptions()
        o.paused = true
        o.method = request.httpMethod
        if !request.allHTTPHeaderFields.isEmpty { o.headers = request.allHTTPHeaderFields }
        if !description.isEmpty { o.description = description }
        o.priority = request.priority
        if let d = request.earliestBeginDate { o.earliestBegin = Int64(max(0, d.timeIntervalSince1970) * 1_000_000) }
        return o
    }

    private func register<T: FerryTask>(_ t: T) -> T {
        lock.lock(); defer { lock.unlock() }
        taskObjects[t.taskIdentifier] = t
        return t
    }

    /// The task object for an id (one object per task), built from the agent's record if new.
    func task(_ id: UInt64, info: TaskInfo? = nil) -> FerryTask? {
        lock.lock()
        if let t = taskObjects[id] { lock.unlock(); if let info { t.update(from: info) }; return t }
        lock.unlock()
        guard let info = info ?? (try? agent.getTask(task: Int64(id)))
        else { return nil }
        let request = FerryRequest(
            url: URL(string: info.url) ?? URL(fileURLWithPath: "/"),
            httpMethod: info.method)
        let t: FerryTask =
            info.kind == .upload
            ? FerryUploadTask(id: id, request: request, description: info.description, state: .running, session: self)
            : FerryDownloadTask(id: id, request: request, description: info.description, state: .running, session: self)
        t.update(from: info)
        lock.lock(); defer { lock.unlock() }
        if let existing = taskObjects[id] { return existing }
        taskObjects[id] = t
        return t
    }

    /// The session's unfinished tasks, with current figures (getTasksWithCompletionHandler).
    public func getTasks(completionHandler: @escaping @Sendable ([FerryTask]) -> Void) {
        DispatchQueue.global().async { [self] in completionHandler((try? allTasks()) ?? []) }
    }

    /// The session's unfinished tasks, with current figures, read from the agent now.
    public func allTasks() throws -> [FerryTask] {
        var out: [FerryTask] = []
        try agent.forEachPage(session: configuration.identifier) { infos in
            for info in infos where !info.state.isFinal {
                if let t = task(UInt64(info.id), info: info) { out.append(t) }
            }
            return true
        }
        return out
    }

    /// Waits until every event queued for the session right now has been delivered and its
    /// callback returned (false on timeout). For start-up code that wants the replay of a
    /// previous run handled before it decides anything. Never call it on the delegate queue.
    @discardableResult
    public func deliverPendingEvents(timeout: TimeInterval = 30) -> Bool {
        let id = configuration.identifier
        var target: UInt64 = 0
        var after = DeliveryLedger.shared.delivered(id)
        while let page = try? agent.fetchEvents(session: id, afterSeq: after, limit: 10_000),
            let last = page.last?.queued.seq
        {
            target = last
            after = last
        }
        kick()
        return DeliveryLedger.shared.wait(id, atLeast: target, until: Date().addingTimeInterval(timeout))
    }

    // MARK: - Session life

    /// No new tasks; the running ones finish, then didBecomeInvalidWithError(nil).
    public func finishTasksAndInvalidate() {
        try? agent.invalidateSession(session: configuration.identifier, cancelTasks: false)
    }

    /// Cancels every unfinished task, then didBecomeInvalidWithError(nil).
    public func invalidateAndCancel() {
        try? agent.invalidateSession(session: configuration.identifier, cancelTasks: true)
    }

    /// Tells the agent the app finished handling the events it was launched for (the completion
    /// handler of iOS's handleEventsForBackgroundURLSession).
    public func finishedHandlingEvents() {
        try? agent.finishedHandlingEvents(session: configuration.identifier)
    }

    /// Stops delivering events and leaves the bus, as an exiting app does. The session and its
    /// tasks live on in the agent; a new FerrySession with the same identifier reconnects.
    public func disconnect() {
        let first: Bool = pump.sync {
            defer { stopped = true }
            if !closed { closed = true; DeliveryLedger.shared.close(configuration.identifier) }
            return !stopped
        }
        guard first else { return }
        signals?.stop()
        signals = nil
        mailbox.close()
        awaited.failAll(
            FerryError(.invalidState, "the session was disconnected: its tasks go on in the agent"))
        client.close()
    }

    /// A restarted agent learns that this client is here (so it does not relaunch the app) and
    /// the events it kept are fetched.
    private func reopen() {
        pump.async { [self] in
            guard !stopped else { return }
            _ = try? agent.openSession(identifier: configuration.identifier, configuration: Self.options(configuration))
            kick()
        }
    }
}
