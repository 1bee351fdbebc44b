import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials

/// `ferry config`: the agent's settings (GSettings schema dev.ferry.Agent). A running agent
/// follows a change at once; a ferryd flag still wins for the run it was given to.
struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or change the agent's settings.",
        discussion: """
            The settings live where the desktop keeps settings (dconf; without it, \
            ~/.config/ferry/settings.ini). A running agent applies a change at once.
            """,
        subcommands: [ListSettings.self, Get.self, Set.self, Reset.self],
        defaultSubcommand: ListSettings.self)

    static func withStore(_ body: (SettingsStore) throws -> Void) throws {
        do { try body(try SettingsStore()) } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(e.kind == .invalidArgument ? 2 : 1)
        }
    }

    /// A value as `set` takes it back: a limit as a rate ("2.0 MiB/s"; 0: none), an empty text as ''.
    static func shown(_ value: String, key: String) -> String {
        if value.isEmpty { return "''" }
        if key.hasSuffix("-limit"), let n = Int64(value), n > 0 {
            return ByteSize.rate(n).replacing("\u{00A0}", with: " ")
        }
        return value
    }

    static let keyCompletion = CompletionKind.custom { _, _, _ in (try? SettingsStore().keys) ?? [] }

    struct ListSettings: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Every setting: its value, default and meaning.",
            discussion: "Example: ferry config list --json | jq '.[] | select(.set)'")
        @Flag(help: "Print JSON (an array of objects: key, value, default, set, allowed, summary, description).")
        var json = false

        func run() throws {
            try Config.withStore { store in
                let infos = try store.keys.map { try store.info($0) }
                if json {
                    return Output.printJSON(
                        .array(
                            infos.map { i -> JSON in
                                [
                                    "key": JSON(i.key), "value": Config.jsonValue(i.value, i.type),
                                    "default": Config.jsonValue(i.defaultValue, i.type), "set": JSON(i.isSet),
                                    "allowed": JSON(i.allowed), "summary": JSON(i.summary),
                                    "description": JSON(i.description),
                                ]
                            }))
                }
                for i in infos {
                    print("\(i.key) = \(Config.shown(i.value, key: i.key))" + (i.isSet ? "" : "  (default)"))
                    print("    \(i.summary). \(i.description)")
                    print("    default \(Config.shown(i.defaultValue, key: i.key)); \(i.allowed)")
                }
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one setting's value.",
            discussion: "Example: ferry config get download-limit")
        @Argument(help: "The setting's name.", completion: Config.keyCompletion) var key: String
        func run() throws {
            try Config.withStore {
                let i = try $0.info(key); print(Config.shown(i.value, key: i.key))
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a setting.",
            discussion: """
                Limits take bytes per second or a size: 500K, 2M (powers of 1024, as curl's --limit-rate). \
                A download folder that is not there yet is made at its first download, if the folder it goes in exists.

                Examples:
                  ferry config set download-limit 2M
                  ferry config set max-transfers 3
                  ferry config set download-folder ~/Videos
                """)
        @Argument(help: "The setting's name.", completion: Config.keyCompletion) var key: String
        /// One value, which may begin with '-' (-4 is a value to refuse by its range, not an option).
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new value.", valueName: "value")) var values:
            [String] = []
        func validate() throws {
            guard values.count == 1 else { throw ValidationError("give one value for \(key) (got \(values.count))") }
        }
        func run() throws { try Config.withStore { try $0.set(key, values[0]) } }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put a setting back to its default.")
        @Argument(help: "The setting's name.", completion: Config.keyCompletion) var key: String
        func run() throws { try Config.withStore { try $0.reset(key) } }
    }

    static func jsonValue(_ text: String, _ type: String) -> JSON {
        switch type {
        case "b": return JSON(text == "true")
        case "i", "u", "x": return Int64(text).map { JSON($0) } ?? JSON(text)
        default: return JSON(text)
        }
    }
}
