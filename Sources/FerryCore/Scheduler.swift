/// Concurrency limits: how many transfers may run, in total and per host.
public struct Scheduler: Sendable {
    public var maxTotal: Int
    public var maxPerHost: Int
    public private(set) var runningByHost: [String: Int] = [:]
    public private(set) var running = 0

    public init(maxTotal: Int = 6, maxPerHost: Int = 2) {
        self.maxTotal = max(1, maxTotal); self.maxPerHost = max(1, maxPerHost)
    }

    public var freeSlots: Int { max(0, maxTotal - running) }
    /// Hosts that may not start another transfer now.
    public var fullHosts: Set<String> { Set(runningByHost.filter { $0.value >= maxPerHost }.keys) }

    public func mayStart(host: String) -> Bool {
        freeSlots > 0 && (runningByHost[host] ?? 0) < maxPerHost
    }
    public mutating func started(host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }
    public mutating func stopped(host: String) {
        running = max(0, running - 1)
        let n = (runningByHost[host] ?? 1) - 1
        runningByHost[host] = n > 0 ? n : nil
    }
}
