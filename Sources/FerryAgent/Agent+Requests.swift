import FerryBus
import FerryCore
import Foundation
import Glibc

/// The agent's answers to API requests. Arguments arrive already type-checked by GDBus
/// against the interface XML; what is checked here is their meaning.
extension Agent {
    static let maxBatch = 100_000

    func openSession(_ identifier: String, _ options: [String: Value]) throws -> [String: Value] {
        try Self.validateSessionIdentifier(identifier)
        let existing = try store.session(identifier)
        var config = existing ?? SessionConfig()
        if config.invalid { config.invalid = false }   // a new life for an invalidated identifier
        if let v = options["launch-command"] { config.launchCommand = try Self.strings(v, "launch-command") }
        if let v = options["discretionary"] { config.discretionary = try Self.bool(v, "discretionary") }
        if let v = options["allow-metered"] { config.allowMetered = try Self.bool(v, "allow-metered") }
        if let v = options["per-host-limit"] { config.perHostLimit = Int(try Self.int(v, "per-host-limit")) }
        if let v = options["request-timeout"] { config.requestTimeout = Int(try Self.int(v, "request-timeout")) }
        if let v = options["resource-timeout"] { config.resourceTimeout = Int(try Self.int(v, "resource-timeout")) }
        if let v = options["popups"] { config.popups = try Self.bool(v, "popups") }
        if let v = options["keep-events"] { config.keepEvents = try Self.bool(v, "keep-events") }
        if let v = options["default-directory"] {
            let dir = try Self.string(v, "default-directory")
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "default-directory \(dir) does not exist or is not writable")
            }
            config.defaultDirectory = dir
        }
        try store.saveSession(identifier, config, now: MainLoop.now)
        sessions[identifier] = config
        if queues[identifier] == nil { queues[identifier] = EventQueue() }
        // Finished files wait here for the app (it moves them during didFinishDownloadingTo).
        let inbox = Self.inboxRoot(settings) + (FileNaming.sanitize(identifier) ?? "session")
        guard Paths.mkdirAll(inbox, mode: 0o700) else {
            throw FerryError(.failed, "cannot create the session's inbox \(inbox)")
        }
        return ["identifier": .string(identifier), "created": .bool(existing == nil),
                "latest-seq": .uint64(queues[identifier]?.lastSeq ?? 0), "inbox": .string(inbox)]
    }

    /// The session tasks may be added to.
    private func usableSession(_ session: String) throws {
        guard let config = try store.session(session) else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        guard !config.invalidating, !config.invalid else {
            throw FerryError(.invalidState, "session '\(session)' was invalidated: open it again for new tasks")
        }
    }

    func createDownloads(session: String, _ requests: [(String, [String: Value])]) throws -> [Int64] {
        try usableSession(session)
        guard requests.count <= Self.maxBatch else {
            throw FerryError(.invalidArgument, "at most \(Self.maxBatch) tasks per call")
        }
        let now = MainLoop.now
        var records: [TaskRecord] = []
        records.reserveCapacity(requests.count)
        for (index, (url, options)) in requests.enumerated() {
            do {
                records.append(try makeRecord(session: session, url: url, options: options, now: now))
            } catch var e as FerryError where requests.count > 1 {
                e.message = "request \(index + 1): \(e.message)"
                throw e
            }
        }
        let saved = try store.insert(records)
        CrashPoint.reached(.requestCommitted)
        for r in saved { onTaskChanged(r.id, r.state) }
        scheduleSoon()
        return saved.map(\.id)
    }

    private func makeRecord(session: String, url: String, options: [String: Value], now: Int64) throws -> TaskRecord {
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: session, url: url, host: host, created: now, updated: now)
        for key in options.keys where !["directory", "output", "sha256", "description", "headers", "paused", "method"].contains(key) {
            throw FerryError(.invalidArgument, "unknown option '\(key)'")
        }
        if let v = options["directory"] {
            let dir = try Self.string(v, "directory")
            guard dir.hasPrefix("/") else { throw FerryError(.invalidDestination, "directory must be an absolute path: \(dir)") }
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.directory = dir
        }
        if let v = options["output"] {
            guard r.directory == nil else { throw FerryError(.invalidArgument, "give either directory or output, not both") }
            let out = try Self.string(v, "output")
            guard out.hasPrefix("/") else { throw FerryError(.invalidDestination, "output must be an absolute path: \(out)") }
            let name = (out as NSString).lastPathComponent
            guard FileNaming.sanitize(name) == name, !out.hasSuffix("/") else {
                throw FerryError(.invalidDestination, "output file name is not acceptable: \(out)")
            }
            let dir = (out as NSString).deletingLastPathComponent
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.output = out
        }
        if let v = options["sha256"] {
            let hex = try Self.string(v, "sha256").lowercased()
            guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else {
                throw FerryError(.invalidArgument, "sha256 must be 64 hexadecimal digits")
            }
            r.sha256 = hex
        }
        if let v = options["description"] {
            let d = try Self.string(v, "description")
            guard d.utf8.count <= 4096 else { throw FerryError(.invalidArgument, "description longer than 4096 bytes") }
            r.description = d
        }
        if let v = options["headers"] {
            guard case .stringDict(let h) = v else { throw FerryError(.invalidArgument, "headers must be a{ss}") }
            for (k, value) in h {
                guard !k.isEmpty, k.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }),
                      !value.contains("\r"), !value.contains("\n") else {
                    throw FerryError(.invalidArgument, "invalid header '\(k.prefix(64))'")
                }
            }
            r.headers = h
        }
        if let v = options["paused"], try Self.bool(v, "paused") { r.state = .paused }
        if let v = options["method"] {
            let m = try Self.string(v, "method").uppercased()
            guard ["GET", "POST"].contains(m) else { throw FerryError(.invalidArgument, "a download's method must be GET or POST, not '\(m.prefix(16))'") }
            r.method = m == "GET" ? nil : m
        }
        return r
    }

    func createUpload(session: String, url: String, file: String, options: [String: Value]) throws -> Int64 {
        try usableSession(session)
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: session, url: url, host: host, created: MainLoop.now, updated: MainLoop.now)
        r.kind = .upload
        for key in options.keys where !["description", "headers", "paused", "method"].contains(key) {
            throw FerryError(.invalidArgument, "unknown upload option '\(key)'")
        }
        guard file.hasPrefix("/") else { throw FerryError(.invalidArgument, "the file to upload must be an absolute path: \(file)") }
        var st = stat()
        guard stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(file, R_OK) == 0 else {
            throw FerryError(.invalidArgument, "cannot upload \(file): not a readable regular file")
        }
        r.uploadFile = file
        r.expected = Int64(st.st_size)
        var download = options
        download["method"] = nil
        let common = try makeRecord(session: session, url: url, options: download, now: MainLoop.now)
        r.description = common.description; r.headers = common.headers; r.state = common.state
        if let v = options["method"] {
            let m = try Self.string(v, "method").uppercased()
            guard ["PUT", "POST"].contains(m) else { throw FerryError(.invalidArgument, "an upload's method must be PUT or POST, not '\(m.prefix(16))'") }
            r.method = m == "PUT" ? nil : m
        }
        let saved = try store.insert([r])[0]
        CrashPoint.reached(.requestCommitted)
        onTaskChanged(saved.id, saved.state)
        scheduleSoon()
        return saved.id
    }

    func createFromResumeData(session: String, _ blob: [UInt8], _ options: [String: Value]) throws -> Int64 {
        let data = try ResumeData.decode(blob)
        try usableSession(session)
        var r = try makeRecord(session: session, url: data.url, options: options, now: MainLoop.now)
        r.etag = data.etag
        r.lastModified = data.lastModified
        r.expected = data.expected
        r.suggestedName = data.suggestedName
        if let old = try store.task(data.task), old.url == data.url, old.state == .canceled || old.state == .failed {
            r.received = data.received
            if old.directory != nil || old.output != nil, options["directory"] == nil, options["output"] == nil {
                r.directory = old.directory; r.output = old.output
            }
        }
        let saved = try store.insert([r])[0]
        CrashPoint.reached(.requestCommitted)
        // Adopt the old task's staging bytes; the machine validates them with If-Range.
        if r.received > 0 { rename(stagingPath(data.task), stagingPath(saved.id)) }
        onTaskChanged(saved.id, saved.state)
        scheduleSoon()
        return saved.id
    }

    func listTasks(session: String, after: Int64, limit: Int) throws -> [TaskRecord] {
        let n = limit == 0 ? 1000 : min(limit, 10_000)
        return try store.tasks(session: session.isEmpty ? nil : session, afterID: after, limit: n).map(shown)
    }

    func task(_ id: Int64) throws -> TaskRecord {
        if let m = machines[id] { return m.record }   // live figures, not the last checkpoint
        guard let r = try store.task(id) else { throw FerryError(.noSuchTask, "no task with id \(id)") }
        return shown(r)
    }

    /// A stored task as callers see it: live figures while it runs; waiting for space while the
    /// store refuses its changes.
    private func shown(_ r: TaskRecord) -> TaskRecord {
        if let m = machines[r.id] { return m.record }
        guard storeBlocked.contains(r.id) else { return r }
        var w = r
        w.state = .waiting
        w.reason = .space
        w.error = "the agent cannot save its records (is the disk holding its state full?); the task continues when it can"
        return w
    }

    func pause(_ id: Int64) throws { try notSaving(id); try withMachine(id) { try $0.pause(now: MainLoop.now) } }
    func resume(_ id: Int64) throws { try withMachine(id) { try $0.resume(now: MainLoop.now) }; scheduleSoon() }
    func cancel(_ id: Int64) throws { try notSaving(id); try withMachine(id) { try $0.cancel(keepPartial: false, now: MainLoop.now) } }

    /// Housekeeping: ended tasks leave the list; the user's files stay, kept partial and
    /// quarantined bytes go. All or nothing.
    func removeTasks(_ ids: [Int64]) throws {
        for id in ids {
            let r = try task(id)
            guard r.state.isFinal, !finalizing.contains(id) else {
                throw FerryError(.invalidState, "task \(id) is \(r.state.rawValue): cancel it before removing it from the list")
            }
        }
        try store.deleteTasks(ids)
        for id in ids {
            discardBytes(id)
            machines[id] = nil
            spaceWarned.remove(id)
        }
    }

    func clearFinished(session: String) throws -> Int {
        let ids = try store.endedTaskIDs(session: session.isEmpty ? nil : session)
        try removeTasks(ids)
        return ids.count
    }

    /// A file being verified and moved into place is past stopping: its bytes are all there.
    private func notSaving(_ id: Int64) throws {
        guard !finalizing.contains(id) else {
            throw FerryError(.invalidState, "task \(id) has every byte and is being saved to its destination; it can no longer be paused or canceled")
        }
    }

    func cancelProducingResumeData(_ id: Int64) throws -> [UInt8] {
        try notSaving(id)
        let live = transfers[id]?.received
        let r = try withMachine(id) { m in
            if let live { _ = m.progressed(received: live, now: MainLoop.now) }
            return try m.cancel(keepPartial: true, now: MainLoop.now)
        }
        return resumeBlob(r)
    }

    /// The resume data of a task's bytes in staging (what is on disk, not what was counted).
    func resumeBlob(_ r: TaskRecord) -> [UInt8] {
        ResumeData(url: r.url, task: r.id, received: fileSize(stagingPath(r.id)), expected: r.expected, etag: r.etag,
                   lastModified: r.lastModified, suggestedName: r.suggestedName).encoded()
    }

    func fetchEvents(session: String, after: UInt64, limit: Int) throws -> [QueuedEvent] {
        guard let q = queues[session] else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        return q.fetch(after: after, limit: limit == 0 ? 1000 : min(limit, 10_000))
    }

    func acknowledgeEvents(session: String, upTo seq: UInt64) throws {
        guard var q = queues[session] else {
            throw FerryError(.noSuchSession, "no session '\(session)': open it first with OpenSession")
        }
        guard seq <= q.lastSeq else {
            throw FerryError(.invalidArgument, "cannot acknowledge event \(seq): the latest is \(q.lastSeq)")
        }
        let dropped = q.acknowledge(upTo: seq)
        queues[session] = q
        if !dropped.isEmpty { try store.deleteEvents(session: session, upTo: seq) }
        CrashPoint.reached(.acknowledged)
    }

    func status() throws -> [String: Value] {
        var counts: [String: Value] = [:]
        for s in TaskState.allCases { counts[s.rawValue] = .uint32(0) }
        for (k, v) in try store.countsByState() { counts[k] = .uint32(UInt32(v)) }
        return ["version": .string(FerryRelease.version), "store": .string(store.path),
                "pid": .int64(Int64(getpid())), "tasks": .dict(counts), "running": .uint32(UInt32(transfers.count)),
                "badge": .uint32(UInt32(clamping: badge))]
    }

    // MARK: - Argument checks

    static func validateSessionIdentifier(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 255,
              id.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 }) else {
            throw FerryError(.invalidArgument, "session identifier must be 1-255 printable characters without spaces")
        }
    }
    static func string(_ v: Value, _ key: String) throws -> String {
        guard let s = v.stringValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a string") }
        return s
    }
    static func bool(_ v: Value, _ key: String) throws -> Bool {
        guard let b = v.boolValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a boolean") }
        return b
    }
    static func int(_ v: Value, _ key: String) throws -> Int64 {
        guard let i = v.int64Value, i >= 0 else { throw FerryError(.invalidArgument, "option '\(key)' must be a non-negative integer") }
        return i
    }
    static func strings(_ v: Value, _ key: String) throws -> [String] {
        guard case .strings(let s) = v else { throw FerryError(.invalidArgument, "option '\(key)' must be an array of strings") }
        return s
    }
}
