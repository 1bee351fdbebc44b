import Foundation
import Testing

/// A mistyped subcommand gets "did you mean", as a mistyped option does (issue 57, item 4).
@Suite struct SubcommandSuggestionTests {
    @Test(arguments: [("donwload", "download"), ("stauts", "status"), ("lsit", "list"), ("cancle", "cancel")])
    func aMistypedSubcommandIsCorrected(_ typed: String, _ meant: String) throws {
        let h = try Harness()
        let r = try h.run(Harness.ferry, [typed, "https://example.org/f.pdf"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("'\(typed)' is not a ferry command. Did you mean '\(meant)'?"), "\(r.stderr)")
    }

    @Test func aWordNearNoSubcommandGetsTheUsualError() throws {
        let h = try Harness()
        let r = try h.run(Harness.ferry, ["zzzz"])
        #expect(r.status == 64 && !r.stderr.contains("Did you mean"), "\(r.stderr)")
    }

    /// `ferry config foo` names config's commands instead of printing `config list`'s usage.
    @Test func aWordThatIsNoConfigCommandIsNamed() throws {
        let h = try Harness()
        let r = try h.run(Harness.ferry, ["config", "lsit"])
        #expect(r.status == 64 && r.stderr.contains("'lsit' is not a config command (list, get, set, reset). Did you mean 'list'?"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("Usage: ferry config list"), "\(r.stderr)")
    }
}
