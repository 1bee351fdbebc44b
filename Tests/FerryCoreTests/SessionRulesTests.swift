import Testing
@testable import FerryCore

/// What a session's configuration and the agent's settings decide for its tasks: folders,
/// the inbox, the stall limit, the cookie jar.
@Suite struct SessionRulesTests {
    var settings = AgentCore.Settings(stateDirectory: "/state")
    let app: SessionConfig = {
        var c = SessionConfig()
        c.app = "org.example.App"
        c.appHome = "/home/u/.var/app/org.example.App"
        return c
    }()

    @Test func aHostSessionsFolderIsFerrydsThenItsOwnThenTheUsers() {
        var s = settings
        var c = SessionConfig()
        #expect(SessionRules(session: "s", config: c, settings: s).defaultDirectory == nil)   // XDG's
        s.downloadFolder = "/home/u/Saved"
        #expect(SessionRules(session: "s", config: c, settings: s).defaultDirectory == "/home/u/Saved")
        c.defaultDirectory = "/home/u/Podcasts"
        #expect(SessionRules(session: "s", config: c, settings: s).defaultDirectory == "/home/u/Podcasts")
        s.downloadDirectory = "/srv/dl"
        #expect(SessionRules(session: "s", config: c, settings: s).defaultDirectory == "/srv/dl")
        #expect(!SessionRules(session: "s", config: c, settings: s).confined)
    }

    @Test func aSandboxedAppKeepsItsFilesInItsOwnFolder() {
        var s = settings
        s.downloadDirectory = "/srv/dl"
        s.downloadFolder = "/home/u/Saved"
        let rules = SessionRules(session: SessionKey.alias("feeds", app: app.app), config: app, settings: s)
        #expect(rules.confined)
        #expect(rules.inbox.hasPrefix(app.appHome + "/"))
        #expect(rules.defaultDirectory == rules.inbox)   // never the host's folders
        var own = app
        own.defaultDirectory = app.appHome + "/Downloads"
        #expect(SessionRules(session: "x", config: own, settings: s).defaultDirectory == app.appHome + "/Downloads")
    }

    @Test func anUploadsReplyGoesToTheInboxUnchecked() {
        var r = TaskRecord(id: 7, session: "s", url: "http://a/up", host: "a")
        r.sha256 = "00"
        r.kind = .upload
        let rules = SessionRules(session: "s", config: SessionConfig(), settings: settings)
        let reply = rules.reply(of: r)
        #expect(reply.output == rules.inbox + "/7-reply" && reply.sha256 == nil)
        #expect(rules.inbox.hasPrefix("/state/"))
    }

    @Test func theStallLimitIsTheShorterOfTheAgentsAndTheSessionsTimeout() {
        var c = SessionConfig()
        c.requestTimeout = 20
        #expect(SessionRules(session: "s", config: c, settings: settings).stallSeconds == 20)
        c.requestTimeout = 600
        #expect(SessionRules(session: "s", config: c, settings: settings).stallSeconds == 60)
        c.requestTimeout = 0
        #expect(SessionRules(session: "s", config: c, settings: settings).stallSeconds == 60)
    }

    @Test func onlyASessionThatKeepsCookiesHasAJar() {
        var c = SessionConfig()
        #expect(SessionRules(session: "s", config: c, settings: settings).cookieJar == nil)
        c.cookies = true
        #expect(SessionRules(session: "s", config: c, settings: settings).cookieJar == "/state/cookies/s.txt")
    }
}
