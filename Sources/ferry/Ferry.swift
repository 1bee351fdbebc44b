import ArgumentParser
import FerryCore

@main
struct FerryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Background downloads that survive logout, crashes and reboots.",
        discussion: """
            Talks to the ferryd agent on the D-Bus session bus, starting it when needed.

            Examples:
              ferry download https://example.org/big.iso --wait
              ferry list
              ferry pause 12; ferry resume 12
              ferry view
              ferry config set download-limit 2M
            """,
        version: FerryRelease.version,
        subcommands: [Download.self, Upload.self, List.self, Show.self, Pause.self, Resume.self, Cancel.self,
                      Remove.self, Clear.self, Watch.self, Status.self, View.self, Open.self, Config.self, Login.self])
}
