import FerryCore
import Testing

/// The state folder's layout, spelled once (the agent, the CLI and the tests use it).
@Suite struct StateFolderTests {
    @Test func everyPathIsInsideTheFolder() {
        let s = StateFolder("/home/u/.local/state/ferry")
        #expect(s.store == "/home/u/.local/state/ferry/ferry.sqlite3")
        #expect(s.staged(7) == s.staging + "/7.part" && s.quarantined(7) == s.quarantine + "/7.part")
        for path in [s.store, s.log, s.staging, s.quarantine, s.uploads, s.inboxes, s.inbox("a")] {
            #expect(path.hasPrefix(s.path + "/"), "\(path)")
        }
    }

    /// A session id is the app's text: it names one folder under the inboxes, never a path.
    @Test func aSessionCannotNameAPathOutsideTheInboxes() {
        let s = StateFolder("/st")
        for id in ["../../.config/autostart", "a/b", "..", ".hidden", ""] {
            let inbox = s.inbox(id)
            #expect(inbox.hasPrefix(s.inboxes) && !inbox.dropFirst(s.inboxes.count).contains("/") && !inbox.contains("/.."), "\(id) → \(inbox)")
            let app = StateFolder.appInbox(appHome: "/h/.var/app/A", session: id)
            #expect(app.hasPrefix("/h/.var/app/A/data/ferry/inbox/") && !app.contains("/.."), "\(id) → \(app)")
        }
    }

    /// A session key names one jar of its own (issue 54, item 4): no two keys share one, none
    /// leaves the jars' folder, and a plain key keeps the file it always had.
    @Test func eachSessionKeyHasItsOwnCookieJar() {
        let s = StateFolder("/st")
        let long = String(repeating: "x/", count: 200)
        let keys = ["org.example.Nest.Child.sync/jobs", "org.example.Nest.Child.sync_jobs", "a%2Fb", "a/b", "a b [app]",
                    "..", ".", "../x", "é", "%C3%A9", "", long, long + "y"]
        let jars = keys.map(s.cookieJar)
        #expect(Set(jars).count == keys.count, "\(jars)")
        for jar in jars {
            #expect(jar.hasPrefix(s.cookieJars) && !jar.contains("/..") && !jar.contains("/./"), "\(jar)")
            #expect(jar.dropFirst(s.cookieJars.count).split(separator: "/").allSatisfy { $0.utf8.count <= 204 }, "\(jar)")
        }
        #expect(s.cookieJar("dev.ferry.test.Jar") == "/st/cookies/dev.ferry.test.Jar.txt")
    }
}
