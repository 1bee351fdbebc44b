import FerryCore
import Testing

@Suite struct SpellingTests {
    let words = ["download", "upload", "list", "show", "pause", "resume", "cancel", "status", "view", "open"]

    @Test func aTypoGetsTheNearestWord() {
        #expect(Spelling.suggestion(for: "donwload", among: words) == "download")  // a swap
        #expect(Spelling.suggestion(for: "stauts", among: words) == "status")
        #expect(Spelling.suggestion(for: "lsit", among: words) == "list")
        #expect(Spelling.suggestion(for: "cancle", among: words) == "cancel")
        #expect(Spelling.suggestion(for: "Downlod", among: words) == "download")  // a letter missing, any case
    }

    @Test func aWordFarFromAllGetsNone() {
        #expect(Spelling.suggestion(for: "https://example.org/f.pdf", among: words) == nil)
        #expect(Spelling.suggestion(for: "zzzz", among: words) == nil)
        #expect(Spelling.suggestion(for: "ls", among: words) == nil)  // two edits of a two-letter word is anything
    }
}
