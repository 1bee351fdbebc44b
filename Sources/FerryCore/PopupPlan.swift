/// What one popup says, decided from the downloads that ended within one coalescing window.
public struct PopupPlan: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case completed(file: String)
        case failed(name: String, reason: String)
        /// A finished download waits for disk space (its bytes are kept).
        case noSpace(name: String)
    }
    public var summary: String
    public var body: String
    public var category: String
    /// The file the Open action opens (only for a single completed download).
    public var file: String?

    /// One popup for completions and one for failures, however many ended together.
    public static func plan(_ outcomes: [Outcome]) -> [PopupPlan] {
        var plans: [PopupPlan] = []
        let done = outcomes.compactMap { if case .completed(let f) = $0 { return f } else { return nil } }
        let failed = outcomes.compactMap { if case .failed(let n, let r) = $0 { return (n, r) } else { return nil } }
        if done.count == 1 {
            plans.append(PopupPlan(summary: "Download complete!", body: baseName(done[0]), category: "transfer.complete", file: done[0]))
        } else if done.count > 1 {
            let names = done.prefix(3).map(baseName).joined(separator: ", ") + (done.count > 3 ? ", …" : "")
            plans.append(PopupPlan(summary: "\(done.count) downloads complete", body: names, category: "transfer.complete", file: nil))
        }
        if failed.count == 1 {
            plans.append(PopupPlan(summary: "Download failed", body: "\(failed[0].0): \(failed[0].1)", category: "transfer.error", file: nil))
        } else if failed.count > 1 {
            plans.append(PopupPlan(summary: "\(failed.count) downloads failed", body: failed.prefix(3).map(\.0).joined(separator: ", "),
                                   category: "transfer.error", file: nil))
        }
        let waiting = outcomes.compactMap { if case .noSpace(let n) = $0 { return n } else { return nil } }
        if waiting.count == 1 {
            plans.append(PopupPlan(summary: "Not enough space to save \(waiting[0])",
                                   body: "Free some space; the download continues where it stopped.",
                                   category: "transfer.error", file: nil))
        } else if waiting.count > 1 {
            plans.append(PopupPlan(summary: "Not enough space to save \(waiting.count) downloads",
                                   body: waiting.prefix(3).joined(separator: ", ") + (waiting.count > 3 ? ", …" : ""),
                                   category: "transfer.error", file: nil))
        }
        return plans
    }

    static func baseName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}
