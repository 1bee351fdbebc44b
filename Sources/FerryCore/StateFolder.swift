/// The agent's state folder ($XDG_STATE_HOME/ferry) and what lies in it: the one place its
/// layout is spelled, for the agent, the CLI and the tests. Paths only; no I/O.
public struct StateFolder: Sendable, Equatable {
    public let path: String
    public init(_ path: String) { self.path = path }

    /// The SQLite store (WAL beside it).
    /// Whether `file` is inside the state folder (the agent's own, no app's).
    public func contains(_ file: String) -> Bool { file.hasPrefix(path + "/") }
    public var store: String { path + "/ferry.sqlite3" }
    /// The agent's log when the CLI starts it (not when systemd or the bus does: the journal).
    public var log: String { path + "/ferryd.log" }
    /// The key that signs resume data (ResumeSeal), 0600.
    public var resumeKey: String { path + "/resume-data.key" }
    /// Partial downloads while they transfer, one file a task.
    public var staging: String { path + "/staging" }
    public func staged(_ task: Int64) -> String { "\(staging)/\(task).part" }
    /// Finished bytes that failed their checksum: kept for the user to look at, never delivered.
    public var quarantine: String { path + "/quarantine" }
    public func quarantined(_ task: Int64) -> String { "\(quarantine)/\(task).part" }
    /// Copies of descriptors handed over for upload (CreateUploadFromFd), with a trailing slash;
    /// each goes when its task ends.
    public var uploads: String { path + "/uploads/" }
    /// The copies one owner holds, counted against its limit: the host's programs', or an app's.
    public func uploads(ofApp app: String?) -> String {
        uploads + (app.map { "apps/" + (FileNaming.sanitize($0) ?? "app") } ?? "host") + "/"
    }
    /// The host's sessions' inboxes, with a trailing slash.
    public var inboxes: String { path + "/inbox/" }
    /// Where a host session's finished files wait for its app.
    public func inbox(_ session: String) -> String { inboxes + Self.inboxName(session) }
    /// A session's cookies (Netscape cookie file, curl's format), when it keeps them.
    public var cookieJars: String { path + "/cookies/" }
    /// A session key's own jar: the key escaped so that no two keys share a file (`a/b` and
    /// `a_b` of two apps must not), cut into folders of at most 200 bytes (a key may be longer
    /// than a file name may). Keys of letters, digits, `.`, `_` and `-` keep their old file.
    public func cookieJar(_ session: String) -> String {
        var escaped = ""
        for (i, byte) in session.utf8.enumerated() {
            let plain =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || (byte == UInt8(ascii: ".") && i > 0)
            if plain {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true)
                    + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        if escaped.isEmpty { escaped = "%" }
        var parts: [Substring] = []
        var rest = Substring(escaped)
        while rest.utf8.count > 200 {
            parts.append(rest.prefix(200))
            rest = rest.dropFirst(200)
        }
        parts.append(rest)
        return cookieJars + parts.joined(separator: "/") + ".txt"
    }

    /// A sandboxed app's inbox is inside its own folder, where it can read what it is handed.
    public static func appInbox(appHome: String, session: String) -> String {
        appHome + "/data/ferry/inbox/" + inboxName(session)
    }

    private static func inboxName(_ session: String) -> String { FileNaming.sanitize(session) ?? "session" }
}
