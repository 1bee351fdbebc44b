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
}
