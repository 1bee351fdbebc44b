import ArgumentParser
import FerryBus
import FerryCore

/// Task ids for shell completion (`ferry pause <Tab>`): asked of the agent only when it already
/// runs — completing never starts it — and at most one page a section, so Tab stays instant with
/// 100,000 tasks. Which sections depends on what the command acts on.
enum TaskIDCompletion {
    static let pageSize = 200

    /// Active tasks (queued, running, waiting, paused), oldest first.
    static let active = CompletionKind.custom { _, _, prefix in ids([.active], prefix) }
    /// Ended tasks (completed, failed, canceled), newest first.
    static let ended = CompletionKind.custom { _, _, prefix in ids([.ended], prefix) }
    /// Both: active first, then ended.
    static let any = CompletionKind.custom { _, _, prefix in ids([.active, .ended], prefix) }

    static func ids(_ sections: [TaskSection], _ prefix: String) -> [String] {
        guard let client = try? BusClient(), client.agentIsRunning() else { return [] }
        let api = AgentProxy(client)
        var out: [String] = []
        for section in sections {
            let page: [TaskInfo] =
                (try? api.listTaskRowsSection(session: "", section: section, offset: 0, limit: pageSize)) ?? []
            out += page.map { String($0.id) }.filter { $0.hasPrefix(prefix) }
        }
        return out
    }
}
