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
        discussion: """
            ferryd takes the downloads and uploads that apps, the ferry command and the Downloads \
            window hand it (the dev.ferry.Agent1 D-Bus API) and carries them out on its own: a \
            transfer goes on when the app that asked for it exits or crashes, resumes from the bytes \
            already fetched after a dropped connection, a kill or a reboot, and retries transient \
            failures with backoff. A finished file is checked, flushed to disk and moved into place \
            without overwriting anything; the app is relaunched to handle it and the user gets a \
            notification and a badge. Every task is on disk before the call that made it returns.

            It normally starts by itself: at login (its systemd user unit, or the desktop's \
            autostart) or when a program first calls it (D-Bus activation). One agent runs per user \
            and state folder.
            """,
        version: FerryRelease.version)

    @Flag(help: "Take over dev.ferry.Agent1 from a running agent.")
    var replace = false
    @OptionGroup var options: AgentOptions

    func run() throws {
        // Everything the agent creates for itself is private (dirs 0700, files 0600); the files
        // it delivers get the mode the user's own programs would give them (the umask it was
        // started with: 0644 under 022).
        let userUmask = umask(0o077)
        signal(SIGPIPE, SIG_IGN)
        // A parent may hand us a blocked signal mask (Foundation's Process does): unblock the
        // signals we shut down on, or SIGTERM would never reach the loop.
        var mask = sigset_t()
        sigemptyset(&mask)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, sig) }
        sigprocmask(SIG_UNBLOCK, &mask, nil)
        let level = options.logLevel
        let logFile = options.logFile
        LoggingSystem.bootstrap { label in AgentLog.handler(label: label, level: level, file: logFile) }
        let log = Logger(label: "ferryd")

        // The stored settings (GSettings), each overridden by its flag; followed while we run.
        var stored: StoredSettings?
        do { stored = try StoredSettings(logger: log) } catch { log.notice("\(error); the defaults and flags apply") }
        func current() -> AgentSettings {
            var s = options.settings(stored)
            s.deliveredFileMode = 0o666 & ~userUmask
            return s
        }
        let settings = current()

        let loop = MainLoop()
        let agent = try Agent(settings: settings, logger: log)
        let bus = try BusService(agent: agent, logger: log)
        stored?.observe { key in
            log.info("setting \(key) changed")
            agent.apply(current())
        }
        var exitCode: Int32 = 0
        bus.own(replace: replace) { outcome in
            switch outcome {
            case .acquired:
                do {
                    try agent.start()
                    log.info(
                        "ferryd \(FerryRelease.version) ready on the session bus; state in \(settings.stateDirectory)")
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
