import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// A sandboxed app owns the folders its paths run through and can swap any of them for a link
/// between asking and the agent's use: every path is used along the resolved path it was
/// allowed, no link on the way (issue 25, item 1). The swaps are made from the test, as the app
/// would make them from inside.
@Suite(.serialized) struct SandboxPathSwapTests {
    let fm = FileManager.default

    func folder(_ path: String) throws -> String {
        try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Replaces `path` by a link to `target` (the folder itself goes aside).
    func swap(_ path: String, for target: String) throws {
        try fm.moveItem(atPath: path, toPath: path + ".aside")
        try fm.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    func failed(_ h: Harness, _ id: Int64) throws -> String {
        try h.eventually("task \(id) ends") { ["failed", "completed"].contains(try h.show(id)["state"] as? String) }
        let info = try h.show(id)
        #expect(info["state"] as? String == "failed", "\(info)")
        return (info["error"] as? String) ?? "\(info)"
    }

    @Test(.needsBubblewrap)
    func aDestinationFolderSwappedForALinkLeadsNowhere() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("run.sh", size: 100_000)
        let autostart = try folder(h.root + "/home/.config/autostart")
        let outside = try folder(h.root + "/home/outside/b")
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".bg"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let direct = try folder(app.home + "/dl"), nested = try folder(app.home + "/a/b")
        var ids: [Int64] = []
        for dir in [direct, nested] {
            let r = try app.call("CreateDownload", session, h.faultURL("run.sh", "hold=50000"), "{'directory': <'\(dir)'>}")
            ids.append(try #require(SandboxTests.taskID(r.stdout), "\(r.stderr)"))
        }
        for id in ids { try h.eventually("the hold") { (try h.show(id)["received"] as? Int) == 50_000 } }
        try swap(direct, for: autostart)                          // the folder itself
        try swap(app.home + "/a", for: PathName.folder(of: outside))   // a folder on the way
        try h.releaseHolds()
        for id in ids { #expect(try failed(h, id).contains("replaced by a link")) }
        #expect(try fm.contentsOfDirectory(atPath: autostart).isEmpty && fm.contentsOfDirectory(atPath: outside).isEmpty)
    }

    @Test(.needsBubblewrap)
    func anInboxSwappedForALinkLeadsNowhere() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("news.bin", size: 100_000)
        let autostart = try folder(h.root + "/home/.config/autostart")
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        // Linked before the session is opened: the agent makes no folder through it.
        let first = SandboxTests.appID + ".first"
        _ = try folder(app.home + "/data/ferry/inbox")
        try fm.createSymbolicLink(atPath: StateFolder.appInbox(appHome: app.home, session: first), withDestinationPath: autostart)
        let opened = try app.call("OpenSession", first, "{}")
        #expect(opened.status != 0 && opened.stderr.contains("InvalidDestination"), "\(opened.stdout) \(opened.stderr)")
        // Linked after: the finished file does not follow it.
        let second = SandboxTests.appID + ".second"
        #expect(try app.call("OpenSession", second, "{'keep-events': <false>}").status == 0)
        let id = try #require(SandboxTests.taskID(try app.call("CreateDownload", second, h.faultURL("news.bin", "hold=50000"), "{}").stdout))
        try h.eventually("the hold") { (try h.show(id)["received"] as? Int) == 50_000 }
        try swap(StateFolder.appInbox(appHome: app.home, session: second), for: autostart)
        try h.releaseHolds()
        #expect(try failed(h, id).contains("replaced by a link"))
        #expect(try fm.contentsOfDirectory(atPath: autostart).isEmpty)
    }

    @Test(.needsBubblewrap)
    func anUploadFileSwappedForALinkSendsNothingOfTheTarget() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let secret = h.root + "/home/.ssh/id_ed25519"
        _ = try folder(PathName.folder(of: secret))
        try "PRIVATE KEY".write(toFile: secret, atomically: true, encoding: .utf8)
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".up"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        let photo = app.home + "/photo.jpg"
        let bytes = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: URL(fileURLWithPath: photo))
        let r = try app.call("CreateUpload", session, h.faultURL("upload/photo.jpg"), photo, "{'paused': <true>}")
        let id = try #require(SandboxTests.taskID(r.stdout), "\(r.stderr)")
        try fm.removeItem(atPath: photo)
        try fm.createSymbolicLink(atPath: photo, withDestinationPath: secret)
        #expect(try app.call("Resume", "\(id)").status == 0)
        try h.eventually("the upload") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/photo.jpg")) == bytes, "the bytes it had when it asked")
    }

    /// The host's folders are the user's: a folder the user replaces by a link while a download
    /// runs is followed, as every download tool does (the file goes where the name now leads).
    @Test func aHostDownloadFollowsItsFolderReplacedByALink() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("big.iso", size: 100_000)
        let asked = try folder(h.root + "/home/isos"), moved = try folder(h.root + "/home/elsewhere")
        let id = try #require(Int64(try h.ferry("download", "--dir", asked, h.faultURL("big.iso", "hold=50000")).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("the hold") { (try h.show(id)["received"] as? Int) == 50_000 }
        try swap(asked, for: moved)
        try h.releaseHolds()
        try h.eventually("saved") { try h.show(id)["state"] as? String == "completed" }
        #expect(fm.fileExists(atPath: moved + "/big.iso"))
    }
}
