import ArgumentParser
import FerryCore
import Glibc

@main
struct FerryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Background downloads that survive crashes and reboots and go on at the next login.",
        discussion: """
            Talks to the ferryd agent on the D-Bus session bus, starting it when needed.

            Examples:
              ferry download https://example.org/big.iso --wait
              ferry download -i urls.txt -d ~/Papers --wait
              ferry list
              ferry pause 12; ferry resume 12
              ferry view
              ferry config set download-limit 2M

            Exit status: 0 done; 1 a task failed or was canceled, or the agent could not be reached; \
            2 a request the agent or ferry refused (a bad URL, folder, value or task id), with the reason; \
            64 a usage error (a missing or unknown argument); 130 interrupted while --wait followed tasks (they go on).
            """,
        version: FerryRelease.version,
        subcommands: [
            Download.self, Upload.self, List.self, Show.self, Pause.self, Resume.self, Cancel.self, SetURL.self,
            Remove.self, Clear.self, Watch.self, Status.self, View.self, Open.self, Config.self, Login.self,
        ])

    /// A mistyped subcommand gets a suggestion, as a mistyped option does (git and cargo do it too).
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let words = configuration.subcommands.map { $0._commandName } + ["help"]
        if let first = arguments.first, !first.hasPrefix("-"), !words.contains(first),
            let near = Spelling.suggestion(for: first, among: words)
        {
            // Glibc, not Foundation: the command links FoundationEssentials only (no ICU data).
            let hint = "Did you mean '\(near)'? (ferry --help lists them)"
            fputs("ferry: '\(first)' is not a ferry command. \(hint)\n", stderr)
            Self.exit(withError: ExitCode.validationFailure)
        }
        // A command of commands (config): a word that is none of them is named, not taken as
        // an argument of the default one.
        if arguments.count > 1, !arguments[1].hasPrefix("-"),
            let command = configuration.subcommands.first(where: { $0._commandName == arguments[0] }),
            case let inner = command.configuration.subcommands.map({ $0._commandName }), !inner.isEmpty,
            !inner.contains(arguments[1]), arguments[1] != "help"
        {
            let near = Spelling.suggestion(for: arguments[1], among: inner).map { " Did you mean '\($0)'?" } ?? ""
            let list = inner.joined(separator: ", ")
            fputs("ferry: '\(arguments[1])' is not a \(arguments[0]) command (\(list)).\(near)\n", stderr)
            Self.exit(withError: ExitCode.validationFailure)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}
