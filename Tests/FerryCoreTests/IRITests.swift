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
}
