import Foundation
import Testing
@testable import FerryCore

/// The standard-library text helpers the agent uses instead of Foundation's: they must agree
/// with Foundation on what headers, URLs and key files contain.
@Suite struct TextParsingTests {
    @Test func percentDecodingAgreesWithFoundation() {
        for s in ["plain", "a%20b", "%E2%82%AC", "%e2%82%ac", "a%2Fb", "100%", "%zz", "%4", "%E2%82", "%C3%A9t%C3%A9",
                  "%00x", "", "%%", "caf%C3%A9.pdf", "%FF"] {
            #expect(s.percentDecoded == s.removingPercentEncoding, "\(s)")
        }
    }

    @Test func trimmingAgreesWithFoundationOnOneLine() {
        for s in ["", " ", "a", "  a b  ", "\ta\t", "\u{00A0}x\u{2003}", " . "] {
            #expect(s.trimmingSpaces == s.trimmingCharacters(in: .whitespaces), "\(s.debugDescription)")
        }
    }

    @Test func searchIgnoresASCIICaseOnly() {
        let h = "Basic REALM=\"x\", charset=UTF-8"
        #expect(h.rangeIgnoringASCIICase(of: "realm=").map { String(h[$0]) } == "REALM=")
        #expect(h.rangeIgnoringASCIICase(of: "charset=").map { String(h[$0.upperBound...]) } == "UTF-8")
        #expect("Digest".rangeIgnoringASCIICase(of: "realm=") == nil)
        #expect("réalm=".rangeIgnoringASCIICase(of: "realm=") == nil)
    }
}

/// Limits as people type them, and as a rate is shown (what `ferry config get` prints).
@Suite struct SizeTextTests {
    @Test func sizesAndRatesReadBack() {
        #expect(SizeText.bytes("2M") == 2 << 20 && SizeText.bytes("500K") == 512_000 && SizeText.bytes("750000") == 750_000)
        #expect(SizeText.bytes("2.0 MiB/s") == 2 << 20 && SizeText.bytes("500.0\u{00A0}KiB/s") == 512_000)
        #expect(SizeText.bytes("two") == nil && SizeText.bytes("-1") == nil && SizeText.bytes("1 2M") == nil)
    }
}
