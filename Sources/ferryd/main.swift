import ArgumentParser
import FerryAgent
import FerryCore
import FoundationEssentials
import Glibc
import Logging

/// ferryd: the per-user Ferry agent. Wiring only; the work is in FerryAgent.
struct FerryDaemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferryd",
        abstract: "The Ferry agent: background downloads for this user, on the D-Bus session bus.",
        version: FerryRelease.version)

    @Flag(help: "Take over dev.ferry.Agent1 from a running agent.")
    var replace = false
    @Option(help: "Folder for the agent's state (default: $XDG_STATE_HOME/ferry).")
    var stateDir: String?
    @Option(help: "Folder finished downloads go to by default (default: the XDG download folder).")
    var downloadDir: String?
    @Option(help: "Transfers running at once, in total.")
    var maxTransfers = 6
    @Option(help: "Transfers running at once to one host.")
    var maxPerHost = 2
    @Option(help: "First retry delay in milliseconds (doubles each failure).")
    var retryBaseMs: Int64 = 1_000
    @Option(help: "Longest retry delay in milliseconds.")
    var retryCapMs: Int64 = 300_000
    @Option(help: "Seconds without a byte before a transfer counts as stalled.")
    var stallTimeout = 60
    @Option(help: "CA bundle for TLS verification (default: the system's).")
    var caFile: String?
    @Flag(help: "Never show notification popups.")
    var noPopups = false
    @Option(help: "Downloads ending within this many milliseconds share one popup.")
    var popupWindowMs: UInt32 = 1_000
    @Option(help: "Seconds before a download waiting for disk space looks again (doubling up to ten times as long).")
    var spaceRecheck: Double = 30
    @Option(help: "MiB kept free on the state folder's disk (or 1 % of it, whichever is more) so the store can always commit.")
    var stateReserveMb: Int64 = 64
    @Option(help: "Percent of the state folder's disk kept free (when more than --state-reserve-mb).")
    var stateReservePercent: Double = 1
    @Option(help: "Days after which ended tasks leave the list by themselves (0: never); files stay.")
    var keepEndedDays: Double = 30
    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    func run() throws {
        umask(0o077)   // everything the agent creates is private: dirs 0700, files 0600
        signal(SIGPIPE, SIG_IGN)
        // A parent may hand us a blocked signal mask (Foundation's Process does): unblock the
        // signals we shut down on, or SIGTERM would never reach the loop.
        var mask = sigset_t()
        sigemptyset(&mask)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, sig) }
        sigprocmask(SIG_UNBLOCK, &mask, nil)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let log = Logger(label: "ferryd")

        var settings = AgentSettings()
        if let stateDir { settings.stateDirectory = stateDir }
        settings.downloadDirectory = downloadDir
        settings.maxTotal = maxTransfers
        settings.maxPerHost = maxPerHost
        settings.backoff = Backoff(baseMilliseconds: retryBaseMs, capMilliseconds: retryCapMs)
        settings.transfer.stallSeconds = stallTimeout
        settings.transfer.caInfo = caFile
        settings.popups = !noPopups
        settings.popupWindowMilliseconds = popupWindowMs
        settings.spaceRecheckMilliseconds = Int64(spaceRecheck * 1_000)
        settings.keepEndedMicroseconds = Int64(keepEndedDays * 86_400 * 1_000_000)
        settings.transfer.stateReserve = SpaceReserve(minimumBytes: stateReserveMb << 20, fraction: stateReservePercent / 100)

        let loop = MainLoop()
        let agent = try Agent(settings: settings, logger: log)
        let bus = try BusService(agent: agent, logger: log)
        var exitCode: Int32 = 0
        bus.own(replace: replace) { outcome in
            switch outcome {
            case .acquired:
                do {
                    try agent.start()
                    log.info("ferryd \(FerryRelease.version) ready on the session bus; state in \(settings.stateDirectory)")
                } catch {
                    log.critical("cannot start: \(error)")
                    exitCode = 1
                    loop.quit()
                }
            case .nameTaken:
                log.error("another agent owns dev.ferry.Agent1 (or this one was replaced); use --replace to take over")
                exitCode = 1
                loop.quit()
            case .busClosed:
                log.notice("the D-Bus session bus closed (the desktop session ended): saving state and exiting")
                loop.quit()
            case .noBus:
                log.error("no D-Bus session bus: start ferryd inside a desktop session, or under dbus-run-session")
                exitCode = 1
                loop.quit()
            }
        }
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            MainLoop.onSignal(sig) {
                log.info("signal \(sig): shutting down")
                loop.quit()
            }
        }
        loop.run()
        agent.shutdown()
        bus.flush()
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}

FerryDaemon.main()
