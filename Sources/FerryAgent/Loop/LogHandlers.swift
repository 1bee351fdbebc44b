import CSystemd
import FoundationEssentials
import Glibc
import Logging

/// Where ferryd's log lines go: the systemd journal with their priority when systemd started
/// it (its stderr is the journal's stream), a size-capped file when `ferry` started it, stderr
/// otherwise.
public enum AgentLog {
    public static func handler(label: String, level: Logger.Level, file: String?) -> LogHandler {
        var h: LogHandler
        if let file {
            h = RotatingFileLogHandler(path: file)
        } else if JournalLogHandler.stderrIsTheJournal {
            h = JournalLogHandler()
        } else {
            h = StreamLogHandler.standardError(label: label)
        }
        h.logLevel = level
        return h
    }
}

/// Sends each line to the journal (sd_journal_sendv) with its syslog priority, so
/// `journalctl --user -u ferryd -p warning` shows only what matters.
struct JournalLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected stderr to; a
    /// process whose stderr is still that stream may log natively instead.
    static var stderrIsTheJournal: Bool {
        guard let v = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = v.split(separator: ":")
        var st = stat()
        guard parts.count == 2, fstat(2, &st) == 0 else { return false }
        return UInt64(parts[0]) == UInt64(st.st_dev) && UInt64(parts[1]) == UInt64(st.st_ino)
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        let fields = [
            "MESSAGE=\(message)", "PRIORITY=\(Self.priority(level))", "SYSLOG_IDENTIFIER=ferryd",
            "CODE_FILE=\(file)", "CODE_LINE=\(line)", "CODE_FUNC=\(function)",
        ]
        var copies = fields.map { strdup($0)! }
        defer { for c in copies { free(c) } }
        var iov = copies.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        _ = copies.withUnsafeMutableBufferPointer { _ in sd_journal_sendv(&iov, Int32(iov.count)) }
    }
}

/// Appends lines to a file that never grows past `limit`: the full file becomes FILE.1 (the
/// previous .1 goes) and a new one starts, so the log keeps at most twice the limit.
/// Log calls come from the loop and from worker threads: one lock around the file.
final class RotatingFileLogHandler: LogHandler, @unchecked Sendable {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    static let limit: Int64 = 1 << 20
    private let path: String
    private var fd: Int32 = -1
    private var size: Int64 = 0
    private var lock = pthread_mutex_t()

    init(path: String) {
        self.path = path
        pthread_mutex_init(&lock, nil)
        open()
    }

    private func open() {
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        var st = stat()
        size = fd >= 0 && fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        var seconds = Glibc.time(nil)
        var local = tm()
        localtime_r(&seconds, &local)
        var buffer = [CChar](repeating: 0, count: 32)
        // As stderr's lines are (swift-log's stream format): the zone, and the module that spoke.
        strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        let stamp = String(cString: buffer)
        let text = Array("\(stamp) \(level) ferryd: [\(source)] \(message)\n".utf8)
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if size + Int64(text.count) > Self.limit, size > 0 {
            close(fd)
            rename(path, path + ".1")
            open()
        }
        guard fd >= 0 else { return }
        let n = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n > 0 { size += Int64(n) }
    }
}
