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

    /// pause and resume share their arguments (`TaskSelection`): the command line says which.
    /// Pause acts on queued, running and waiting tasks; resume on paused and waiting ones, and
    /// failed ones (tried again).
    static let selection = CompletionKind.custom { words, _, prefix in
        words.contains("resume")
            ? ids([.active, .ended], prefix) { [.paused, .waiting, .failed].contains($0.state) }
            : ids([.active], prefix) { [.queued, .running, .waiting].contains($0.state) }
    }
    /// What open opens: completed downloads.
    static let openable = CompletionKind.custom { _, _, prefix in
        ids([.ended], prefix) { $0.state == .completed && $0.kind == .download }
    }
    /// What set-url takes: downloads not yet completed or canceled.
    static let relinkable = CompletionKind.custom { _, _, prefix in
        ids([.active, .ended], prefix) { $0.kind == .download && $0.state != .completed && $0.state != .canceled }
    }

    static func ids(
        _ sections: [TaskSection], _ prefix: String, where keep: (TaskInfo) -> Bool = { _ in true }
    )
        -> [String]
    {
        guard let client = try? BusClient(), client.agentIsRunning() else { return [] }
        let api = AgentProxy(client)
        var out: [String] = []
        for section in sections {
            let page: [TaskInfo] =
                (try? api.listTaskRowsSection(session: "", section: section, offset: 0, limit: pageSize)) ?? []
            out += page.filter(keep).map { String($0.id) }.filter { $0.hasPrefix(prefix) }
        }
        return out
    }
}
