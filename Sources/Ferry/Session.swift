import FerryBus
import FerryCore
import Foundation

/// A background session (URLSession with a background configuration). The agent owns its
/// transfers; this object creates tasks and delivers the session's events, exactly once each
/// and in order, to the delegate on the delegate queue, or to `events` when there is no delegate.
/// Creating a session whose identifier exists reconnects to it and replays its pending events.
public final class FerrySession: @unchecked Sendable {
    public let configuration: FerrySessionConfiguration
    public let delegate: FerrySessionDelegate?
    /// Callbacks run here (a serial queue when the app gave none).
    public let delegateQueue: OperationQueue
    /// The events, for async code; only for a session made without a delegate.
    public var events: FerryEvents { FerryEvents(mailbox: mailbox) }

    let client: BusClient
    let mailbox = EventMailbox()
    let inbox: URL
    private let lock = NSLock()
    private var tasks: [UInt64: FerryTask] = [:]
    var signals: SignalThread?
    // Delivery state (SessionDelivery.swift): only touched on `pump`.
    let pump = DispatchQueue(label: "dev.ferry.session.pump")
    var pumping = false
    var stopped = false
    var durableSinceDrain = false
    /// The identifier was released in the ledger (pump queue, or deinit).
    var closed = false

    /// Connects to the agent (starting it through D-Bus activation if needed) and opens the session.
    public init(configuration: FerrySessionConfiguration, delegate: FerrySessionDelegate?,
                delegateQueue: OperationQueue? = nil) throws {
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
            throw FerryError(.invalidState, "session '\(configuration.identifier)' is already open in this process: use that object, or disconnect() it first")
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
        let reply: [Value]
        do {
            reply = try client.call("OpenSession", [.string(configuration.identifier), .dict(Self.options(configuration))])
        } catch {
            DeliveryLedger.shared.close(configuration.identifier)
            throw error
        }
        guard let inbox = reply.first?.dictValue?["inbox"]?.stringValue else {
            DeliveryLedger.shared.close(configuration.identifier)
            throw FerryError(.failed, "the agent is too old for this library (OpenSession gave no inbox)")
        }
        self.inbox = URL(fileURLWithPath: inbox, isDirectory: true)
        // The agent never reuses a sequence number; one below what this process saw means its
        // state was reset, so the numbers start again.
        DeliveryLedger.shared.reconcile(configuration.identifier,
                                        latest: reply.first?.dictValue?["latest-seq"]?.uint64Value ?? 0)
        signals = SignalThread(client: client, session: configuration.identifier,
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

    static func options(_ c: FerrySessionConfiguration) -> [String: Value] {
        var o: [String: Value] = [
            "launch-command": .strings(c.launchCommand), "discretionary": .bool(c.isDiscretionary),
            "allow-metered": .bool(c.allowsMeteredNetworkAccess),
            "per-host-limit": .uint32(UInt32(clamping: c.httpMaximumConnectionsPerHost)),
            "request-timeout": .uint32(UInt32(clamping: Int(c.timeoutIntervalForRequest))),
            "resource-timeout": .uint32(UInt32(clamping: Int(c.timeoutIntervalForResource))),
            "popups": .bool(c.showsNotifications), "keep-events": .bool(true)]
        if let d = c.defaultDestination { o["default-directory"] = .string(d.path) }
        return o
    }

    // MARK: - Tasks

    public func downloadTask(with url: URL, description: String = "") throws -> FerryDownloadTask {
        try downloadTask(with: FerryRequest(url: url), description: description)
    }

    /// A download, created suspended: call `resume()`.
    public func downloadTask(with request: FerryRequest, description: String = "") throws -> FerryDownloadTask {
        var options = taskOptions(request, description: description)
        options["directory"] = .string(inbox.path)
        let reply = try client.call("CreateDownload", [.string(configuration.identifier),
                                                       .string(request.url.absoluteString), .dict(options)])
        return register(FerryDownloadTask(id: reply.first?.uint64Value ?? 0, request: request, description: description,
                                          state: .suspended, session: self))
    }

    /// Continues a canceled or failed download from its resume data (only missing bytes are fetched).
    /// Garbage or foreign data throws InvalidResumeData.
    public func downloadTask(withResumeData data: Data, description: String = "") throws -> FerryDownloadTask {
        let decoded = try ResumeData.decode([UInt8](data))
        var options: [String: Value] = ["paused": .bool(true), "directory": .string(inbox.path)]
        if !description.isEmpty { options["description"] = .string(description) }
        let reply = try client.call("CreateDownloadFromResumeData", [.string(configuration.identifier),
                                                                     .bytes([UInt8](data)), .dict(options)])
        let url = URL(string: decoded.url) ?? URL(fileURLWithPath: "/")
        return register(FerryDownloadTask(id: reply.first?.uint64Value ?? 0, request: FerryRequest(url: url),
                                          description: description, state: .suspended, session: self))
    }

    /// An upload of `file` as the request body, created suspended: call `resume()`.
    public func uploadTask(with request: FerryRequest, fromFile file: URL, description: String = "") throws -> FerryUploadTask {
        let reply = try client.call("CreateUpload", [.string(configuration.identifier), .string(request.url.absoluteString),
                                                     .string(file.path), .dict(taskOptions(request, description: description))])
        return register(FerryUploadTask(id: reply.first?.uint64Value ?? 0, request: request, description: description,
                                        state: .suspended, session: self))
    }

    private func taskOptions(_ request: FerryRequest, description: String) -> [String: Value] {
        var o: [String: Value] = ["paused": .bool(true)]
        if let m = request.httpMethod { o["method"] = .string(m) }
        if !request.allHTTPHeaderFields.isEmpty { o["headers"] = .stringDict(request.allHTTPHeaderFields) }
        if !description.isEmpty { o["description"] = .string(description) }
        return o
    }

    private func register<T: FerryTask>(_ t: T) -> T {
        lock.lock(); defer { lock.unlock() }
        tasks[t.taskIdentifier] = t
        return t
    }

    /// The task object for an id (one object per task), built from the agent's record if new.
    func task(_ id: UInt64, info: TaskInfo? = nil) -> FerryTask? {
        lock.lock()
        if let t = tasks[id] { lock.unlock(); if let info { t.update(from: info) }; return t }
        lock.unlock()
        guard let info = info ?? (try? client.call("GetTask", [.uint64(id)]).first?.dictValue.flatMap(TaskInfo.init)) ?? nil
        else { return nil }
        let request = FerryRequest(url: URL(string: info.url) ?? URL(fileURLWithPath: "/"),
                                   httpMethod: info.method)
        let t: FerryTask = info.kind == .upload
            ? FerryUploadTask(id: id, request: request, description: info.description, state: .running, session: self)
            : FerryDownloadTask(id: id, request: request, description: info.description, state: .running, session: self)
        t.update(from: info)
        lock.lock(); defer { lock.unlock() }
        if let existing = tasks[id] { return existing }
        tasks[id] = t
        return t
    }

    /// The session's unfinished tasks, with current figures (getTasksWithCompletionHandler).
    public func getTasks(completionHandler: @escaping @Sendable ([FerryTask]) -> Void) {
        DispatchQueue.global().async { [self] in completionHandler((try? allTasks()) ?? []) }
    }

    public func allTasks() throws -> [FerryTask] {
        var out: [FerryTask] = []
        var after: UInt64 = 0
        while true {
            let page = try client.call("ListTasks", [.string(configuration.identifier), .uint64(after), .uint32(1000)])
            let infos = (page.first?.arrayValue ?? []).compactMap { $0.dictValue.flatMap(TaskInfo.init) }
            for info in infos where !info.state.isFinal {
                if let t = task(UInt64(info.id), info: info) { out.append(t) }
            }
            guard let last = infos.last, infos.count == 1000 else { return out }
            after = UInt64(last.id)
        }
    }

    /// Waits until every event queued for the session right now has been delivered and its
    /// callback returned (false on timeout). For start-up code that wants the replay of a
    /// previous run handled before it decides anything. Never call it on the delegate queue.
    @discardableResult
    public func deliverPendingEvents(timeout: TimeInterval = 30) -> Bool {
        let id = configuration.identifier
        var target: UInt64 = 0
        var after = DeliveryLedger.shared.delivered(id)
        while let page = try? client.call("FetchEvents", [.string(id), .uint64(after), .uint32(10_000)]),
              let last = page.first?.arrayValue?.last?.tupleValue?.first?.uint64Value {
            target = last
            after = last
        }
        kick()
        return DeliveryLedger.shared.wait(id, atLeast: target, until: Date().addingTimeInterval(timeout))
    }

    // MARK: - Session life

    /// No new tasks; the running ones finish, then didBecomeInvalidWithError(nil).
    public func finishTasksAndInvalidate() {
        _ = try? client.call("InvalidateSession", [.string(configuration.identifier), .bool(false)])
    }

    /// Cancels every unfinished task, then didBecomeInvalidWithError(nil).
    public func invalidateAndCancel() {
        _ = try? client.call("InvalidateSession", [.string(configuration.identifier), .bool(true)])
    }

    /// Tells the agent the app finished handling the events it was launched for (the completion
    /// handler of iOS's handleEventsForBackgroundURLSession).
    public func finishedHandlingEvents() {
        _ = try? client.call("FinishedHandlingEvents", [.string(configuration.identifier)])
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
        client.close()
    }

    /// A restarted agent learns that this client is here (so it does not relaunch the app) and
    /// the events it kept are fetched.
    private func reopen() {
        pump.async { [self] in
            guard !stopped else { return }
            _ = try? client.call("OpenSession", [.string(configuration.identifier), .dict(Self.options(configuration))])
            kick()
        }
    }
}
