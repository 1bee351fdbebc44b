import Testing
@testable import FerryCore

/// What the host makes of the extension's messages, without a browser (issue 59).
@Suite struct BrowserMessageTests {
    @Test func aDownloadsHeadersAndName() throws {
        let json = #"{"type":"download","url":"https://a.example/f","cookies":"sid=1","referrer":"https://a.example/","userAgent":"UA","filename":"/home/u/Downloads/../.bashrc"}"#
        guard case .download(let d) = try BrowserMessage.request(Array(json.utf8)) else {
            Issue.record("not a download")
            return
        }
        #expect(d.headers == ["Cookie": "sid=1", "Referer": "https://a.example/", "User-Agent": "UA"])
        #expect(d.fileName == "bashrc", "the last part only, with no leading dot")
        #expect(BrowserMessage.Download(url: "https://a.example/f", filename: "..").fileName == nil)
    }

    @Test func framesAreTheLengthInTheMachinesOrderThenTheJSON() {
        let frame = BrowserMessage.frame(BrowserMessage.Reply.task(7).json)
        #expect(BrowserMessage.length(Array(frame.prefix(4))) == frame.count - 4)
        #expect(String(decoding: frame.dropFirst(4), as: UTF8.self) == #"{"ok":true,"task":7}"#)
        let long = BrowserMessage.Reply.error(String(repeating: "x", count: 2_000_000)).json
        #expect(long.count < BrowserMessage.maxToBrowser)
    }
}
