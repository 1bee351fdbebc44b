import Testing
@testable import FerryCore

/// Addresses as pasted (IRIs) become URIs on the wire, and read as they were pasted.
@Suite struct IRITests {
    private let punycode = ["bücher.example": "xn--bcher-kva.example"]

    @Test func anASCIIAddressIsLeftAsItIs() throws {
        let url = "http://h/a%20b?q=%2F&x=1#top"
        #expect(try IRI.uri(url, hostToASCII: { _ in nil }) == url)
    }

    @Test func lettersArePercentEncodedAsUTF8() throws {
        let uri = try IRI.uri("http://127.0.0.1:8080/données/get?q=日本&lang=fr-é#café", hostToASCII: { _ in nil })
        #expect(uri == "http://127.0.0.1:8080/donn%C3%A9es/get?q=%E6%97%A5%E6%9C%AC&lang=fr-%C3%A9#caf%C3%A9")
    }

    @Test func anInternationalHostGoesOutInIDNAForm() throws {
        let uri = try IRI.uri("https://bücher.example/ü", hostToASCII: { punycode[$0] })
        #expect(uri == "https://xn--bcher-kva.example/%C3%BC")
        #expect(throws: FerryError.self) { try IRI.uri("https://bad-ü.example/", hostToASCII: { _ in nil }) }
    }

    @Test func aURIReadsAsTyped() {
        let reverse = Dictionary(uniqueKeysWithValues: punycode.map { ($1, $0) })
        let readable = IRI.readable("https://user@xn--bcher-kva.example:8443/%C3%BC?q=%E6%97%A5%E6%9C%AC",
                                    hostToUnicode: { reverse[$0] })
        #expect(readable == "https://user@bücher.example:8443/ü?q=日本")
    }

    @Test func escapesOfDelimitersAndBrokenUTF8AreKept() {
        #expect(IRI.decodeLetters("/a%2Fb%20c%3F") == "/a%2Fb%20c%3F")
        #expect(IRI.decodeLetters("/x%C3%28y%E6%97") == "/x%C3%28y%E6%97")
        #expect(IRI.decodeLetters("%e2%82%ac5") == "€5")
    }

    /// Escapes of what cannot be seen stay escapes (issue 54, item 9); letters are decoded.
    @Test func hiddenCharactersStayEscaped() {
        let uri = "http://h/a%E2%80%AEb?c=%C2%9B&d=%E2%80%8B&e=%C3%A9&f=%E2%80%8D&g=%C2%A0"
        #expect(IRI.readable(uri, hostToUnicode: { $0 }) == "http://h/a%E2%80%AEb?c=%C2%9B&d=%E2%80%8B&e=é&f=\u{200D}&g=%C2%A0")
        #expect(VisibleText.escaped("ok\u{202E}txt.exe") == "ok%E2%80%AEtxt.exe")
        #expect(FileNaming.sanitize("in\u{200B}voice.pdf") == "invoice.pdf")
    }

    /// Browsers' rule for showing a host in its letters: one script (or a language's mix), and
    /// no whole label of Latin look-alikes under a TLD of another script.
    @Test func lookAlikeHostsAreNotShownInTheirLetters() {
        func script(_ s: Unicode.Scalar) -> LookAlikeHost.Script {
            switch s.value {
            case 0x30...0x39, 0x2D: .common
            case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F: .latin
            case 0x370...0x3FF: .greek
            case 0x400...0x52F: .cyrillic
            case 0x3040...0x309F: .hiragana
            case 0x4E00...0x9FFF: .han
            default: .other(Int(s.value))
            }
        }
        #expect(LookAlikeHost.mayShow("bücher.example", script: script))
        #expect(LookAlikeHost.mayShow("пример.рф", script: script))
        #expect(LookAlikeHost.mayShow("日本の.jp", script: script))
        #expect(!LookAlikeHost.mayShow("\u{430}pple.com", script: script))  // mixed
        #expect(!LookAlikeHost.mayShow("\u{430}\u{440}\u{440}\u{4CF}\u{435}.com", script: script))  // whole-script
        #expect(LookAlikeHost.mayShow("\u{430}\u{440}\u{440}\u{4CF}\u{435}.\u{440}\u{444}", script: script))  // under .рф
    }
}
