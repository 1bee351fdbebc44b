import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// How tasks look on a terminal and in JSON. The JSON keys are a contract for scripts.
enum Output {
    /// A task in `list`: the fields `TaskField` lists there, named by their API keys.
    static func json(_ t: TaskInfo) -> [String: JSON] {
        var object: [String: JSON] = [:]
        for f in TaskField.listed { object[f.name] = jsonValue(f, t) }
        if let (key, at) = Timing.of(t) { object[key] = .int(at / 1_000_000) }  // only when there is one
        return object
    }

    /// One task in full (`show`, and `download`/`upload` with --json): what the list's rows
    /// carry and the task's priority and own speed limit, and an upload's reply when it has one.
    static func detailJSON(_ t: TaskInfo) -> [String: JSON] {
        var object = json(t)
        for f in TaskField.shown {
            switch f.json {
            case .none, .list: continue
            case .detail: break
            case .detailWith(let head):
                guard TaskField.byKey[head]?.value(t) != .null else { continue }
            }
            object[f.name] = jsonValue(f, t)
        }
        return object
    }

    /// A field's value in the JSON (times in seconds; an absent reply's headers an empty object).
    static func jsonValue(_ f: TaskField, _ t: TaskInfo) -> JSON {
        switch f.value(t) {
        case .null: f.isDictionary ? .object([:]) : .null
        case .int(let n): .int(f.jsonInSeconds ? n / 1_000_000 : n)
        case .double(let d): .double(d)
        case .text(let s): .string(s)
        case .bool(let b): .bool(b)
        case .dict(let d): JSON(d)
        }
    }

    /// Prints the JSON array of tasks that come in pages, each page as soon as it is there; the
    /// text is the same as `printJSON` of the whole array of `json(task)` objects.
    static func streamJSONArray(_ produce: (_ emit: ([TaskInfo]) throws -> Void) throws -> Void) throws {
        var first = true
        var bytes: [UInt8] = []
        try produce { page in
            bytes.removeAll(keepingCapacity: true)
            page.withUnsafeBufferPointer { page in  // each task written in place, not copied
                for i in page.indices {
                    bytes.append(contentsOf: (first ? "[\n" : ",\n").utf8)
                    TaskJSON.write(page[i], indent: 2, to: &bytes)
                    first = false
                }
            }
            bytes.withUnsafeBufferPointer { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
        }
        print(first ? "[\n\n]" : "\n]")
    }

    static func printJSON(_ value: JSON) { print(value.text) }
    static func printJSON(_ object: [String: JSON]) { print(JSON.object(object).text) }

    /// GLib's size with its no-break space, a plain one when the output is not a terminal
    /// (scripts split on spaces).
    static func bytes(_ n: Int64) -> String {
        let text = ByteSize.text(n)
        return stdoutIsTerminal ? text : text.replacing("\u{00A0}", with: " ")
    }

    /// A transfer's speed, in the units of the sizes beside it.
    static func rate(_ n: Int64) -> String {
        let text = ByteSize.speed(n)
        return stdoutIsTerminal ? text : text.replacing("\u{00A0}", with: " ")
    }

    static func progress(_ t: TaskInfo) -> String {
        if let e = t.expected, e > 0 {
            let percent = String(Int(Double(t.received) * 100 / Double(e)))
            let padded = String(repeating: " ", count: max(0, 3 - percent.count)) + percent
            return padded + "% \(bytes(t.received))/\(bytes(e))"
        }
        return bytes(t.received)
    }

    static func stateText(_ t: TaskInfo) -> String {
        if t.state == .waiting, let r = t.reason { return "waiting (\(r.rawValue))" }
        return t.state.rawValue
    }

    /// One row; with a running task's speed (watch), its rate and time left after the figures.
    /// A failed task says why after its name; on a terminal the last column is cut (in its
    /// middle) to the terminal's width.
    static func line(_ t: TaskInfo, speed: TransferSpeed? = nil) -> String {
        var target =
            (t.kind == .upload ? "↑ " : "") + (t.file ?? Hostname.readableURL(t.url))
            + (t.app.isEmpty ? "" : "  [\(t.app)]")
            + (t.session == BusNames.browserSession ? "  [from the browser]" : "")
        if t.state == .failed, let why = t.error, !why.isEmpty { target += " — " + VisibleText.escaped(why) }
        if let timing = Timing.text(t) { target += " — " + timing }
        var figures = progress(t)
        if t.state == .running, let s = speed?.bytesPerSecond, s > 0 {
            figures += "  \(rate(Int64(s)))"
            if let left = speed?.secondsLeft(received: t.received, expected: t.expected) {
                figures += ", \(TransferSpeed.duration(left)) left"
            }
        }
        let row = "\(pad(String(t.id), 6)) \(pad(stateText(t), stateWidth)) \(pad(figures, 24)) "
        guard let columns = terminalColumns, columns - row.count >= 12, target.count > columns - row.count else {
            return row + target
        }
        let room = columns - row.count - 1, head = room / 2
        return row + target.prefix(head) + "…" + target.suffix(room - head)
    }

    /// The longest state: "waiting (credentials)".
    private static let stateWidth = 21

    /// The terminal's width when stdout is one.
    static var terminalColumns: Int? {
        var size = winsize()
        guard stdoutIsTerminal, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Padded to a column's width; never cut (String.padding cuts what is longer).
    private static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    static let header = "ID     STATE                 PROGRESS                 FILE/URL"

    /// `relaunch`: what the agent says about relaunching the session's app (empty: nothing).
    static func detail(_ t: TaskInfo, relaunch: String = "") -> String {
        var lines = [
            "Task \(t.id)", "  session:  \(t.session)" + (t.app.isEmpty ? "" : " (of \(t.app), sandboxed)"),
            "  url:      \(Hostname.readableURL(t.url))",
            "  state:    \(stateText(t))", "  progress: \(progress(t))",
        ]
        if t.kind == .upload {
            lines.insert("  upload:   \(t.method) of \(t.uploadFile ?? "?")", at: 3)
        } else if t.method != "GET" {
            lines.insert("  method:   \(t.method)", at: 3)
        }
        if let (key, at) = Timing.of(t) {
            lines.append((key == Timing.startAt ? "  starts:   " : "  next try: ") + LocalTime.when(at))
        }
        if !relaunch.isEmpty { lines.append("  relaunch: \(relaunch)") }
        if let f = t.file { lines.append("  file:     \(f)") }
        if let e = t.error { lines.append("  error:    \(VisibleText.escaped(e))") }
        // An app's words: what cannot be seen is shown as its escapes.
        if !t.description.isEmpty { lines.append("  note:     \(VisibleText.escaped(t.description))") }
        return lines.joined(separator: "\n")
    }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static func error(_ message: String) { toStderr("ferry: \(message)\n") }

    /// Written at once, unbuffered (progress lines, prompts).
    static func toStderr(_ text: String) {
        fputs(text, stderr)
        fflush(stderr)
    }
}

/// When a task that waits goes on: the start time it was given (`start-at`) or the next
/// attempt of one that waits to retry (`next-attempt`), in the JSON as Unix seconds (the key
/// only when the task has one) and in words on a terminal.
enum Timing {
    static let startAt = "start-at", nextAttempt = "next-attempt"
    static let keys = [startAt, nextAttempt]

    /// The key and the time (µs), or nil.
    static func of(_ t: TaskInfo) -> (String, Int64)? {
        guard let at = t.retryAt else { return nil }
        switch t.state {
        case .waiting: return (t.reason == .scheduled ? startAt : nextAttempt, at)
        case .paused: return (startAt, at)  // made paused with a start time (the library's tasks)
        default: return nil
        }
    }

    static func text(_ t: TaskInfo) -> String? {
        guard let (key, at) = of(t) else { return nil }
        return (key == startAt ? "starts " : "next attempt ") + LocalTime.when(at)
    }
}
