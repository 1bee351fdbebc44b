import Testing
@testable import FerryCore

/// `-i FILE` lists as wget and aria2c read them.
@Suite struct URLListTests {
    @Test func urlsCommentsBlankLinesAndAria2Options() throws {
        let text = "# papers\r\nhttps://a.example/1.pdf\n\n  out=first.pdf\n\tdir=/tmp/x\nhttps://b.example/2.pdf\n"
        #expect(try URLList.parse(text, source: "list") == [
            URLList.Entry(url: "https://a.example/1.pdf", name: "first.pdf", folder: "/tmp/x"),
            URLList.Entry(url: "https://b.example/2.pdf"),
        ])
    }

    @Test func whatItCannotTakeIsNamedByLine() {
        for (text, why) in [("  out=x\n", "before any URL"), ("u\n  out\n", "not NAME=VALUE"), ("u\n\n  split=4\n", "line 3")] {
            #expect {
                _ = try URLList.parse(text, source: "urls.txt")
            } throws: { ($0 as? FerryError)?.message.contains(why) == true && ($0 as? FerryError)?.message.contains("urls.txt") == true }
        }
    }
}
