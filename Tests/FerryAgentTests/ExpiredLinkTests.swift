import FerryCore
import Foundation
import Testing

/// A signed link that expired: nginx's secure_link answers 410 Gone. The failure says so (the
/// error name stays NotFound: scripts know 410 under it).
@Suite struct ExpiredLinkTests {
    @Test func aGoneLinkIsNamedGoneNotNotFound() throws {
        let h = try Harness()
        try h.startNginx(locations: """
            location /signed/ {
                secure_link $arg_md5,$arg_expires;
                secure_link_md5 "$secure_link_expires$uri secret";
                if ($secure_link = "") { return 403; }
                if ($secure_link = "0") { return 410; }
            }
            """)
        try FileManager.default.createDirectory(atPath: h.www + "/signed", withIntermediateDirectories: true)
        try h.makeFile("signed/report.pdf", size: 10_000)
        try h.startAgent()
        // A link that expired a minute ago, signed as nginx's secure_link_md5 wants it.
        let expires = Int(Date().timeIntervalSince1970) - 60
        let md5 = try h.run("/bin/sh", ["-c", "printf '%s' '\(expires)/signed/report.pdf secret' | openssl md5 -binary | openssl base64 | tr +/ -_ | tr -d ="])
            .stdout.trimmingSpaces
        let r = try h.ferry("download", "--wait", "--dir", h.root + "/got",
                            "http://127.0.0.1:\(h.nginxPort)/signed/report.pdf?md5=\(md5)&expires=\(expires)")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("HTTP 410: gone") && r.stderr.contains("expired") && !r.stderr.contains("not found"),
                "\(r.stderr)")
        let log = try String(contentsOfFile: h.root + "/nginx/logs/validators.log", encoding: .utf8)
        #expect(log.split(separator: "\n").last?.hasSuffix("|410") == true, "secure_link refused the link: \(log)")
    }
}
