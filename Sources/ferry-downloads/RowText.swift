import FerryBus
import FerryCore
import CGLib
import FoundationEssentials
import Glibc

/// The words and figures of a row: what the user reads, from a task and its speed.
enum RowText {
    static func name(_ t: TaskInfo) -> String {
        if let file = t.file, !file.isEmpty { return PathName.lastName(of: file) }
        // An upload: the file sent (the agent's own copies, "….upload", carry no name of the user's).
        if t.kind == .upload, let sent = t.uploadFile, !sent.hasSuffix(".upload") { return PathName.lastName(of: sent) }
        let path = URL(string: t.url)?.lastPathComponent ?? ""
        return path.isEmpty || path == "/" ? host(t.url) : VisibleText.escaped(path)
    }

    /// The URL's host in its own letters where they cannot pass for another name.
    static func host(_ url: String) -> String {
        guard let host = URL(string: url)?.host else { return VisibleText.escaped(url) }
        return Hostname.shown(host) ?? host
    }

    static func bytes(_ n: Int64) -> String {
        ByteSize.text(n)
    }

    /// The state in a word or two ("Running", "Paused", "Retrying at 14:03", "Completed").
    static func state(_ t: TaskInfo) -> String {
        switch t.state {
        case .waiting: return waiting(t)
        case .failed: return "Failed"
        default: return t.state.rawValue.prefix(1).uppercased() + t.state.rawValue.dropFirst()
        }
    }

    /// "3.2 MB of 10 MB · 1.1 MiB/s · 6 s left", or why the task waits.
    static func active(_ t: TaskInfo, speed: Double?) -> String {
        let amount =
            (t.kind == .upload ? "Sent " : "")
            + (t.expected.map { "\(bytes(t.received)) of \(bytes($0))" } ?? bytes(t.received))
        switch t.state {
        case .queued: return "Queued · \(amount)"
        case .paused: return "Paused · \(amount)"
        case .waiting: return "\(waiting(t)) · \(amount)"
        default:
            guard let speed, speed > 0 else { return amount }
            var parts = [amount, ByteSize.speed(Int64(speed))]
            if let e = t.expected, e > t.received { parts.append(duration(Double(e - t.received) / speed) + " left") }
            return parts.joined(separator: " · ")
        }
    }

    static func waiting(_ t: TaskInfo) -> String {
        switch t.reason {
        case .network?: return "Waiting for the network"
        case .space?: return "Waiting for disk space"
        case .folder?: return "Waiting for its folder" + (t.error.map { ": " + $0 } ?? "")
        case .credentials?: return "Waiting for a password"
        case .proxy?: return "Waiting for the proxy" + (t.error.map { ": " + $0 } ?? "")
        case .scheduled?: return t.retryAt.map { "Starts at " + clock($0) } ?? "Scheduled"
        case .retry?:
            guard let at = t.retryAt else { return "Waiting to retry" }
            return "Retrying at " + clock(at)
        case nil: return "Waiting"
        }
    }

    /// "1.2 MB · Downloads · today 14:03"; failed and canceled tasks say so.
    static func ended(_ t: TaskInfo) -> String {
        switch t.state {
        case .failed: return "Failed: " + (t.error ?? "unknown error")
        case .canceled: return "Canceled"
        default:
            if t.kind == .upload {  // "Sent 1.0 MB to example.org · answered 201 · today 14:03"
                let answer =
                    t.replyStatus.map { ["answered \($0)" + (t.replyCut ? " (reply cut at 1 MiB)" : "")] } ?? []
                return (["Sent \(bytes(t.received)) to \(host(t.url))"] + answer + [when(t.updated)]).joined(
                    separator: " · ")
            }
            let folder = t.file.map { PathName.lastName(of: PathName.folder(of: $0)) } ?? ""
            let source = t.session == BusNames.browserSession ? "from the browser" : ""
            return [bytes(t.received), folder, source, when(t.updated)].filter { !$0.isEmpty }.joined(separator: " · ")
        }
    }

    static func duration(_ seconds: Double) -> String { TransferSpeed.duration(seconds) }

    static func clock(_ microseconds: Int64) -> String { LocalTime.clock(microseconds) }
    static func when(_ microseconds: Int64) -> String { LocalTime.when(microseconds) }
}
