import FerryBus
import FerryCore
import Foundation
import Testing

/// An address pasted from a browser's address bar, with letters outside ASCII, against
/// gunicorn (PyPI), a strict server that answers 400 to raw UTF-8 in a request line.
@Suite(.serialized) struct InternationalURLTests {
    @Test func aPastedAddressReachesAStrictServerAndReadsAsPasted() throws {
        let h = try Harness()
        h.activatesServices = true   // gunicorn's worker, not a child of the test, goes at the end too
        let port = try Harness.freePort()
        let log = h.root + "/gunicorn.log"
        let server = try h.spawnWaitable("/usr/bin/env", ["python3", "-m", "gunicorn", "--graceful-timeout", "0", "--access-logfile", "-", "-b", "127.0.0.1:\(port)",
                                                 "httpbin:app"], output: log, errors: log)
        _ = server
        try h.eventually("gunicorn listening (scripts/install-deps --test installs it)") { Harness.canConnect(port) }
        try h.startAgent()
        let pasted = "http://127.0.0.1:\(port)/get?q=日本&lang=fr-é"
        let out = h.root + "/answer.json"
        let r = try h.run(Harness.ferry, ["download", "--wait", "--output", out, pasted])
        #expect(r.status == 0, "\(r.stderr)")
        let answer = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(answer.contains("\"q\": \"\\u65e5\\u672c\"") && answer.contains("\"lang\": \"fr-\\u00e9\""), "\(answer)")
        let show = try h.run(Harness.ferry, ["show", "1"])
        #expect(show.stdout.contains("q=日本&lang=fr-é"), "\(show.stdout)")
        #expect(Hostname.ascii("bücher.example") == "xn--bcher-kva.example")
        #expect(Hostname.readableURL("http://xn--bcher-kva.example/%C3%BC") == "http://bücher.example/ü")
    }
}
