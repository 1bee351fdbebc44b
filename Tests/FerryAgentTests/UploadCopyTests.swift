import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// CreateUploadFromFd keeps a copy of the file in the state folder until the upload ends:
/// bounded per file and per owner, sparse files stay sparse, the state disk's reserve stays
/// free, and copies nothing uses go at the next start (issue 31, item 5).
@Suite(.serialized) struct UploadCopyTests {
    /// A file of `size` bytes whose first `data` bytes hold data, the rest a hole.
    static func file(_ path: String, size: Int64, data: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let bytes = (0..<data).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        #expect(write(fd, bytes, bytes.count) == bytes.count && ftruncate(fd, off_t(size)) == 0)
    }

    /// Hands `path` over by descriptor from the host, paused (nothing is sent).
    static func hand(_ proxy: AgentProxy, _ path: String, _ h: Harness) throws -> Int64 {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var options = TaskOptions()
        options.paused = true
        return try proxy.createUploadFromFd(session: BusNames.cliSession, url: h.faultURL("upload/x"), fd: fd, options: options)
    }

    static func copies(_ h: Harness, app: String? = nil) -> [(path: String, size: Int64, disk: Int64)] {
        let folder = StateFolder(h.state).uploads(ofApp: app)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { name in
            var st = stat()
            lstat(folder + name, &st)
            return (folder + name, Int64(st.st_size), Int64(st.st_blocks) * 512)
        }
    }

    func refused(_ kind: FerryError.Kind, mentioning: String, _ body: () throws -> Int64) {
        do {
            let id = try body()
            Issue.record("accepted as task \(id)")
        } catch let e as FerryError {
            #expect(e.kind == kind && e.message.contains(mentioning), "\(e)")
        } catch { Issue.record("\(error)") }
    }

    @Test func aSparseFileStaysSparseAndItsDataIsWhatCounts() throws {
        let h = try Harness()
        try h.startAgent(["--upload-copy-max-mb", "1"])
        let proxy = try AgentProxy(h.client())
        try proxy.perform(AgentCalls.openUserSession)
        let sparse = h.root + "/sparse.img", dense = h.root + "/dense.bin"
        try Self.file(sparse, size: 2 << 30, data: 65_536)
        try Self.file(dense, size: 2 << 20, data: 2 << 20)
        let id = try Self.hand(proxy, sparse, h)
        let copy = try #require(Self.copies(h).first)
        #expect(copy.size == 2 << 30 && copy.disk < 1 << 20, "2 GiB with 64 KiB of data took \(copy.disk) bytes on disk")
        let original = try FileHandle(forReadingFrom: URL(fileURLWithPath: sparse)).readData(ofLength: 65_536 + 16)
        #expect(try FileHandle(forReadingFrom: URL(fileURLWithPath: copy.path)).readData(ofLength: 65_536 + 16) == original)
        #expect(try proxy.getTask(task: id).expected == 2 << 30)
        refused(.limitExceeded, mentioning: "upload-copy-max-mb") { try Self.hand(proxy, dense, h) }
        #expect(Self.copies(h).count == 1, "a refused copy leaves nothing")
    }

    @Test(.needsBubblewrap)
    func eachOwnerHasItsOwnLimit() throws {
        let h = try Harness()
        try h.startAgent(["--upload-copies-per-app-mb", "3"])
        let proxy = try AgentProxy(h.client())
        try proxy.perform(AgentCalls.openUserSession)
        let dense = h.root + "/dense.bin"
        try Self.file(dense, size: 2 << 20, data: 2 << 20)
        let first = try Self.hand(proxy, dense, h)
        refused(.limitExceeded, mentioning: "upload-copies-per-app-mb") { try Self.hand(proxy, dense, h) }
        // An app's copies are its own: the host's do not count against it.
        let app = try FakeFlatpak(h, id: SandboxTests.appID)
        let session = SandboxTests.appID + ".up"
        #expect(try app.call("OpenSession", session, "{'keep-events': <false>}").status == 0)
        try Self.file(app.home + "/video.bin", size: 2 << 20, data: 2 << 20)
        let script = """
            import dbus, os, sys
            agent = dbus.Interface(dbus.SessionBus().get_object("dev.ferry.Agent1", "/dev/ferry/Agent1"), "dev.ferry.Agent1")
            print(agent.CreateUploadFromFd(sys.argv[1], sys.argv[2], dbus.types.UnixFd(os.open(sys.argv[3], os.O_RDONLY)), {"paused": True}))
            """
        let sent = try app.run(["/usr/bin/python3", "-c", script, session, h.faultURL("upload/v"), app.home + "/video.bin"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(Self.copies(h, app: SandboxTests.appID).count == 1)
        // The host's first task ends: its copy goes, and its room is the host's again.
        try proxy.cancel(task: first)
        try h.eventually("the copy removed") { Self.copies(h).isEmpty }
        _ = try Self.hand(proxy, dense, h)
    }

    @Test func aCopyLeavesTheStateDisksReserveFree() throws {
        let h = try Harness()
        try h.startAgent(["--state-reserve-percent", "99.9"])
        let proxy = try AgentProxy(h.client())
        try proxy.perform(AgentCalls.openUserSession)
        let dense = h.root + "/dense.bin"
        try Self.file(dense, size: 1 << 20, data: 1 << 20)
        refused(.storeUnavailable, mentioning: "nearly full") { try Self.hand(proxy, dense, h) }
        #expect(Self.copies(h).isEmpty)
    }

    @Test func copiesNoTaskUsesGoAtTheNextStart() throws {
        let h = try Harness()
        try h.startAgent()
        let proxy = try AgentProxy(h.client())
        try proxy.perform(AgentCalls.openUserSession)
        let small = h.root + "/small.bin"
        try Self.file(small, size: 4_096, data: 4_096)
        _ = try Self.hand(proxy, small, h)
        let kept = try #require(Self.copies(h).first?.path)
        let stale = StateFolder(h.state).uploads(ofApp: nil) + "left-by-a-crash.upload"
        try Self.file(stale, size: 4_096, data: 4_096)
        h.killAgent()
        try h.startAgent()
        _ = try AgentProxy(h.client()).getStatus()   // answered once the start's clean-up is done
        #expect(Self.copies(h).map(\.path) == [kept])
    }
}
