/// Concurrency limits: how many transfers may run, in total and per host.
public struct Scheduler: Sendable {
    public var maxTotal: Int
    public var maxPerHost: Int
    public private(set) var runningByHost: [String: Int] = [:]
    public private(set) var running = 0
    /// Running transfers per session and host (for per-session host limits).
    public private(set) var runningBySessionHost: [SessionHost: Int] = [:]

    public struct SessionHost: Hashable, Sendable {
        public var session: String, host: String
        public init(_ session: String, _ host: String) { self.session = session; self.host = host }
    }

    public init(maxTotal: Int = 6, maxPerHost: Int = 2) {
        self.maxTotal = max(1, maxTotal); self.maxPerHost = max(1, maxPerHost)
    }

    public var freeSlots: Int { max(0, maxTotal - running) }
    /// Hosts that may not start another transfer now.
    public var fullHosts: Set<String> { Set(runningByHost.filter { $0.value >= maxPerHost }.keys) }

    public func mayStart(host: String) -> Bool {
        freeSlots > 0 && (runningByHost[host] ?? 0) < maxPerHost
    }
    public func running(session: String, host: String) -> Int { runningBySessionHost[SessionHost(session, host)] ?? 0 }

    public mutating func started(host: String, session: String = "") {
        running += 1
        runningByHost[host, default: 0] += 1
        runningBySessionHost[SessionHost(session, host), default: 0] += 1
    }
    public mutating func stopped(host: String, session: String = "") {
        running = max(0, running - 1)
        let n = (runningByHost[host] ?? 1) - 1
        runningByHost[host] = n > 0 ? n : nil
        let key = SessionHost(session, host)
        let m = (runningBySessionHost[key] ?? 1) - 1
        runningBySessionHost[key] = m > 0 ? m : nil
    }
}
