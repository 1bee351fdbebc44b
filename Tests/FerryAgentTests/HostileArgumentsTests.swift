import FerryBus
import FerryCore
import Foundation
import Testing

/// Every subcommand with hostile arguments (negative, zero, huge, empty, very long, odd Unicode):
/// a usage error or the agent's refusal, never a crash (exit ≥ 128: a trap, a signal).
/// (Non-UTF-8 bytes cannot be passed through Foundation's Process, which takes Strings.)
@Suite struct HostileArgumentsTests {
    @Test func noSubcommandCrashesOnHostileArguments() throws {
        let h = try Harness()
        try h.startAgent()
        let subcommands = ["download", "upload", "list", "show", "pause", "resume", "cancel", "remove", "clear", "watch",
                           "status", "view", "open"]
        let hostile = ["-1", "0", "-9223372036854775808", "99999999999999999999", "", String(repeating: "9", count: 5_000),
                       "\u{202E}\u{0}x", "http://[::1", "%00"]
        for sub in subcommands {
            for arg in hostile {
                let r = try h.run(Harness.ferry, [sub, "--", arg])
                #expect(!r.signaled && r.status < 128 && !r.stderr.contains("Fatal error"), "ferry \(sub) -- \(arg.prefix(40)): \(r.status) \(r.stderr.prefix(300))")
                #expect(r.status != 0 || ["download", "list", "clear", "status", "view"].contains(sub), "ferry \(sub) -- \(arg.prefix(40)) succeeded")
            }
        }
        #expect(try h.run(Harness.ferry, ["show", "--", "-1"]).stderr.contains("task ids are positive"))
    }

    /// The options that take numbers, times and sizes, and `ferry config`, with the same values.
    @Test func noOptionOrSettingCrashesOnHostileValues() throws {
        let h = try Harness()
        h.useMemoryBackend()
        try h.startAgent()
        let hostile = ["-1", "0", "-9223372036854775808", "99999999999999999999", "", String(repeating: "9", count: 5_000),
                       "\u{202E}\u{0}x", "1e400", "nan", "-inf", "%00"]
        func check(_ args: [String]) throws {
            let r = try h.run(Harness.ferry, args)
            #expect(!r.signaled && r.status < 128 && !r.stderr.contains("Fatal error"), "ferry \(args.joined(separator: " ").prefix(80)): \(r.status) \(r.stderr.prefix(300))")
        }
        for arg in hostile {
            for option in ["--priority", "--max-rate", "--tries", "--timeout", "--start-at"] {
                try check(["download", option, arg, "http://127.0.0.1:9/x"])
            }
            for key in ["max-transfers", "download-limit", "popups", "download-folder", "keep-ended-days", arg] {
                try check(["config", "set", key, arg])
            }
            try check(["config", "get", arg])
            try check(["config", "reset", arg])
        }
    }

    /// One style for every command's errors: "ferry: …" and exit 1 (download and upload said
    /// "Error: …" through ArgumentParser).
    @Test func everyCommandReportsErrorsTheSameWay() throws {
        let h = try Harness()
        let noBus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(h.root)/no-bus"]
        for args in [["download", "http://127.0.0.1:9/x"], ["upload", "/etc/hostname", "http://127.0.0.1:9/x"], ["show", "1"], ["list"]] {
            let r = try h.run(Harness.ferry, args, environment: noBus)
            #expect(r.status == 1 && r.stderr.hasPrefix("ferry: no D-Bus session bus"), "\(args): \(r.status) \(r.stderr)")
        }
    }
}
