/// What one popup says, decided from the downloads that ended within one coalescing window.
/// The body is markup for servers that read it (the spec's subset): every name and reason in it
/// comes from a server and is escaped, and cut to what a popup can show.
public struct PopupPlan: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// `appSession`: a sandboxed app's session (its file is the app's, not for the host to open).
        case completed(file: String, appSession: String? = nil)
        case failed(name: String, reason: String)
        /// A finished download waits for disk space (its bytes are kept).
        case noSpace(name: String)
        /// The agent's store was damaged and set aside; `recovered` unfinished tasks came back paused.
        case storeDamaged(recovered: Int)
    }
    public var summary: String
    public var body: String
    public var category: String
    /// The file the Open action opens (only for a single completed download of the user's own).
    public var file: String?
    /// The sandboxed app whose session the popup's default action starts (a single completed
    /// download of an app's): the app opens its file, the host never does.
    public var appSession: String? = nil
    /// The freedesktop icon name: the download folder for completions, an error or a warning.
    public var icon = "folder-download"

    /// One popup for completions and one for failures, however many ended together.
    public static func plan(_ outcomes: [Outcome]) -> [PopupPlan] {
        var plans: [PopupPlan] = []
        let done = outcomes.compactMap { if case .completed(let f, let s) = $0 { return (f, s) } else { return nil } }
        let failed = outcomes.compactMap { o -> (String, String)? in
            if case .failed(let n, let r) = o {
                return (shown(n), escaped(VisibleText.escaped(headline(r))))
            } else {
                return nil
            }
        }
        if done.count == 1 {
            let (file, app) = done[0]
            plans.append(
                PopupPlan(
                    summary: "Download complete!", body: shown(baseName(file)), category: "transfer.complete",
                    file: app == nil ? file : nil, appSession: app))
        } else if done.count > 1 {
            let names =
                done.prefix(3).map { shown(baseName($0.0)) }.joined(separator: ", ") + (done.count > 3 ? ", …" : "")
            plans.append(
                PopupPlan(
                    summary: "\(done.count) downloads complete", body: names, category: "transfer.complete", file: nil))
        }
        if let first = failed.first {
            // The first failure with its reason; the others counted (the window and `ferry list` show them).
            let more = failed.count > 1 ? " — and \(failed.count - 1) more" : ""
            plans.append(
                PopupPlan(
                    summary: failed.count == 1 ? "Download failed" : "\(failed.count) downloads failed",
                    body: "\(first.0): \(first.1)\(more)", category: "transfer.error", file: nil,
                    icon: "dialog-error"))
        }
        let waiting = outcomes.compactMap { if case .noSpace(let n) = $0 { return n } else { return nil } }
        if waiting.count == 1 {
            plans.append(
                PopupPlan(
                    summary: "Not enough space to save \(cut(waiting[0], 60))",
                    body: "Free some space; the download continues where it stopped.",
                    category: "transfer.error", file: nil, icon: "dialog-warning"))
        } else if waiting.count > 1 {
            plans.append(
                PopupPlan(
                    summary: "Not enough space to save \(waiting.count) downloads",
                    body: waiting.prefix(3).map(shown).joined(separator: ", ") + (waiting.count > 3 ? ", …" : ""),
                    category: "transfer.error", file: nil, icon: "dialog-warning"))
        }
        for case .storeDamaged(let n) in outcomes {
            let back =
                n == 0 ? "none of its transfers could be read back" : "\(n) unfinished transfer(s) came back, paused"
            plans.append(
                PopupPlan(
                    summary: "Ferry's list of transfers was damaged",
                    body: "It was set aside and a new one started; \(back). Downloaded files are untouched.",
                    category: "transfer.error", file: nil, icon: "dialog-warning"))
        }
        return plans
    }

    /// A reason in one line: its first clause (details such as a quarantine path follow "; "),
    /// and a checksum's digests left to the window and `ferry show`.
    static func headline(_ reason: String) -> String {
        if reason.hasPrefix("SHA-256 mismatch") {
            return "not the file expected (its SHA-256 differs; ferry show has both)"
        }
        let first = reason.firstRange(of: "; ").map { String(reason[..<$0.lowerBound]) } ?? reason
        return cut(first, 140)
    }

    static func baseName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

    /// A name as a popup body shows it: cut in the middle (its end tells the type), escaped.
    static func shown(_ name: String) -> String { escaped(cut(VisibleText.escaped(name), 60, middle: true)) }

    /// At most `limit` characters, with an ellipsis where the rest was.
    static func cut(_ text: String, _ limit: Int, middle: Bool = false) -> String {
        guard text.count > limit else { return text }
        guard middle else { return text.prefix(limit - 1) + "…" }
        return text.prefix(limit / 2) + "…" + text.suffix(limit - limit / 2 - 1)
    }

    /// The body markup's special characters as entities (what g_markup_escape_text does).
    static func escaped(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
