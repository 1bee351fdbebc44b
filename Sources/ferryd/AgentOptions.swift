import ArgumentParser
import FerryAgent
import FerryBus
import FerryCore
import Logging

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// ferryd's settings on the command line: each option fills one field of `AgentSettings`,
/// and a value out of range is refused with the option, the value and what it may be.
struct AgentOptions: ParsableArguments {
    @Option(help: "Folder for the agent's state (default: $XDG_STATE_HOME/ferry).")
    var stateDir: String?
    @Option(
        help:
            "Folder finished downloads go to, even when a session names its own (default: the download-folder setting)."
    )
    var downloadDir: String?
    @Option(help: "Transfers running at once, in total (1-1000; default: the max-transfers setting, 6).")
    var maxTransfers: Int?
    @Option(help: "Transfers running at once to one host (1-1000; default: the max-per-host setting, 2).")
    var maxPerHost: Int?
    @Option(help: "First retry delay in milliseconds (doubles each failure).")
    var retryBaseMs: Int64 = 1_000
    @Option(help: "Longest retry delay in milliseconds.")
    var retryCapMs: Int64 = 300_000
    @Option(
        help:
            ArgumentHelp(
                "Bytes per second all downloads together may receive, e.g. 2M (0: none; default: the download-limit "
                    + "setting)."),
        transform: AgentOptions.size)
    var downloadLimit: Int64?
    @Option(
        help: "Bytes per second all uploads together may send (0: none; default: the upload-limit setting).",
        transform: AgentOptions.size)
    var uploadLimit: Int64?
    @Option(help: "Seconds without a byte before a transfer counts as stalled.")
    var stallTimeout = 60
    @Option(help: "CA bundle for TLS verification (default: the system's).")
    var caFile: String?
    @Flag(help: "Never show notification popups (default: the popups setting).")
    var noPopups = false
    @Option(
        help:
            ArgumentHelp(
                "Downloads ending within this many milliseconds share one popup (default: the popup-window-ms setting, "
                    + "1000).")
    )
    var popupWindowMs: UInt32?
    @Option(help: "Seconds before a download waiting for disk space looks again (doubling up to ten times as long).")
    var spaceRecheck: Double = 30
    @Option(
        help:
            "MiB kept free on the state folder's disk (or 1 % of it, whichever is more) so the store can always commit."
    )
    var stateReserveMb: Int64 = 64
    @Option(help: "Percent of the state folder's disk kept free (when more than --state-reserve-mb).")
    var stateReservePercent: Double = 1
    @Option(
        help:
            ArgumentHelp(
                "Days after which ended tasks leave the list by themselves (0: never; default: the keep-ended-days "
                    + "setting, 30); files stay.")
    )
    var keepEndedDays: Double?
    @Option(
        help:
            ArgumentHelp(
                "MiB of data one file handed over by descriptor (CreateUploadFromFd) may hold; the agent keeps a copy "
                    + "until the upload ends.")
    )
    var uploadCopyMaxMb: Int64 = 4_096
    @Option(help: "MiB of such copies one app (or the host's programs together) may hold at once.")
    var uploadCopiesPerAppMb: Int64 = 8_192
    @Option(help: "Requests one sandboxed app may send in one CreateDownloads.")
    var appMaxBatch = 1_000
    @Option(help: "Unfinished tasks one sandboxed app may have.")
    var appMaxTasks = 10_000
    @Option(help: "Sessions one sandboxed app may have open.")
    var appMaxSessions = 100
    @Option(help: "Events a sandboxed app may leave unacknowledged and still create tasks.")
    var appMaxUnacknowledgedEvents = 10_000
    @Option(
        help:
            ArgumentHelp(
                "Log to this file, kept under 1 MiB (the full file becomes FILE.1) "
                    + "(default: the journal under systemd, else stderr).")
    )
    var logFile: String?
    @Option(help: "Log level: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
    var logLevel: Logger.Level = .info

    static func size(_ text: String) throws -> Int64 {
        guard let n = SizeText.bytes(text) else {
            throw ValidationError("'\(text)' is not a rate: bytes per second, or a size such as 500K or 2M")
        }
        return n
    }

    func validate() throws {
        func check(_ ok: Bool, _ option: String, _ value: Any, _ allowed: String) throws {
            guard ok else { throw ValidationError("--\(option) \(value): must be \(allowed)") }
        }
        for (setting, value) in [
            (Setting.maxTransfers, maxTransfers.map(Int64.init)), (.maxPerHost, maxPerHost.map(Int64.init)),
            (.popupWindowMs, popupWindowMs.map(Int64.init)),
        ] {
            if let value { try check(setting.range!.contains(value), setting.rawValue, value, setting.allowed) }
        }
        try check(retryBaseMs >= 1, "retry-base-ms", retryBaseMs, "at least 1")
        try check(retryCapMs >= retryBaseMs, "retry-cap-ms", retryCapMs, "at least --retry-base-ms (\(retryBaseMs))")
        try check(stallTimeout >= 1, "stall-timeout", stallTimeout, "at least 1 second")
        try check(
            spaceRecheck > 0 && spaceRecheck <= 86_400, "space-recheck", spaceRecheck,
            "more than 0 and at most 86400 seconds")
        try check(stateReserveMb >= 0, "state-reserve-mb", stateReserveMb, "0 or more")
        try check(
            (0..<100).contains(stateReservePercent), "state-reserve-percent", stateReservePercent, "0 to less than 100")
        if let keepEndedDays, let days = Setting.keepEndedDays.range {
            try check(
                keepEndedDays >= Double(days.lowerBound) && keepEndedDays <= Double(days.upperBound),
                Setting.keepEndedDays.rawValue, keepEndedDays, "0 (never) to \(days.upperBound)")
        }
        try check(uploadCopyMaxMb >= 0, "upload-copy-max-mb", uploadCopyMaxMb, "0 or more")
        try check(uploadCopiesPerAppMb >= 0, "upload-copies-per-app-mb", uploadCopiesPerAppMb, "0 or more")
        for (option, value) in [
            ("app-max-batch", appMaxBatch), ("app-max-tasks", appMaxTasks), ("app-max-sessions", appMaxSessions),
            ("app-max-unacknowledged-events", appMaxUnacknowledgedEvents),
        ] {
            try check(value >= 1, option, value, "at least 1")
        }
        for (option, path) in [("state-dir", stateDir), ("download-dir", downloadDir), ("ca-file", caFile)] {
            if let path { try check(path.hasPrefix("/"), option, path, "an absolute path") }
        }
    }

    /// The settings for this run: the stored ones (GSettings, when its schema is installed),
    /// each overridden by its flag when given.
    func settings(_ stored: StoredSettings?) -> AgentSettings {
        var s = AgentSettings()
        stored?.apply(to: &s)
        if let stateDir { s.core.stateDirectory = stateDir }
        s.core.downloadDirectory = downloadDir
        if let maxTransfers { s.core.maxTotal = maxTransfers }
        if let maxPerHost { s.core.maxPerHost = maxPerHost }
        s.core.backoff = Backoff(baseMilliseconds: retryBaseMs, capMilliseconds: retryCapMs)
        s.core.stallSeconds = stallTimeout
        s.core.spaceRecheck = Int64(spaceRecheck * 1_000_000)
        if let keepEndedDays { s.core.keepEnded = Int64(keepEndedDays * 86_400 * 1_000_000) }
        s.core.appLimits.batch = appMaxBatch
        s.core.appLimits.unfinishedTasks = appMaxTasks
        s.core.appLimits.sessions = appMaxSessions
        s.core.appLimits.unacknowledgedEvents = appMaxUnacknowledgedEvents
        s.transfer.caInfo = caFile
        s.core.stateReserve = SpaceReserve(minimumBytes: stateReserveMb << 20, fraction: stateReservePercent / 100)
        s.uploadCopies = UploadCopyLimits(
            perFileBytes: uploadCopyMaxMb << 20, perOwnerBytes: uploadCopiesPerAppMb << 20)
        if noPopups { s.popups = false }
        if let popupWindowMs { s.popupWindowMilliseconds = popupWindowMs }
        if let downloadLimit { s.core.downloadLimit = downloadLimit }
        if let uploadLimit { s.core.uploadLimit = uploadLimit }
        return s
    }
}
