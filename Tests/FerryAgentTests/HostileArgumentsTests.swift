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
}
