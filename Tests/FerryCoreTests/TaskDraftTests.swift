import Testing
@testable import FerryCore

/// What a client may ask of a new task, decided without the machine: the folders it names are
/// looked up through `Lookups` (here, a set), so each rule is checked alone.
@Suite struct TaskDraftTests {
    let look = TaskDraft.Lookups(hostToASCII: { $0 }, writableFolder: { ["/home/u/Downloads", "/home/u"].contains($0) })

    func refused(_ o: TaskOptions, upload: Bool = false, _ kind: FerryError.Kind, _ words: String) {
        do {
            _ = upload ? try TaskDraft.upload(url: "https://h/u", o, look) : try TaskDraft.download(url: "https://h/u", o, look)
            Issue.record("taken: \(o)")
        } catch let e as FerryError { #expect(e.kind == kind && e.message.contains(words), "\(e)") } catch { Issue.record("\(error)") }
    }

    @Test func destinationsAreAbsoluteExistingAndNamedPlainly() throws {
        var o = TaskOptions()
        o.directory = "Downloads"
        refused(o, .invalidDestination, "absolute path")
        o.directory = "/nowhere"
        refused(o, .invalidDestination, "does not exist or is not writable")
        o.directory = "/home/u/Downloads"
        #expect(try TaskDraft.download(url: "https://h/u", o, look).directory == "/home/u/Downloads")
        o.output = "/home/u/Downloads/a.pdf"
        refused(o, .invalidArgument, "either directory or output")
        o.directory = nil
        #expect(try TaskDraft.download(url: "https://h/u", o, look).output == "/home/u/Downloads/a.pdf")
        o.output = "/home/u/Downloads/.."
        refused(o, .invalidDestination, "file name is not acceptable")
    }

    @Test func optionsBecomeTheTasksFields() throws {
        var o = TaskOptions()
        o.sha256 = String(repeating: "AB", count: 32)
        o.method = "post"
        o.priority = 0.25
        o.timeout = 60
        o.earliestBegin = 1_000
        let r = try TaskDraft.download(url: "https://H/u", o, look)
        #expect(r.sha256 == String(repeating: "ab", count: 32) && r.method == "POST" && r.priority == 0.25)
        #expect(r.deadline == 60_000_000 && r.state == .waiting && r.reason == .scheduled && r.retryAt == 1_000)
        o.paused = true
        #expect(try TaskDraft.download(url: "https://h/u", o, look).state == .paused)
        o.sha256 = "abc"
        refused(o, .invalidArgument, "64 hexadecimal digits")
        o.sha256 = nil
        o.priority = 2
        refused(o, .invalidArgument, "from 0 to 1")
        o.priority = nil
        o.method = "PUT"
        refused(o, .invalidArgument, "method must be GET or POST")
        o.method = "GET"
        #expect(try TaskDraft.download(url: "https://h/u", o, look).method == nil)   // the default is stored as none
    }

    @Test func uploadsNameTheirProtocol() throws {
        var o = TaskOptions()
        o.resumable = "tus"
        #expect(try TaskDraft.upload(url: "https://h/u", o, look).resumable == .tus)
        o.resumable = "ftp"
        refused(o, upload: true, .invalidArgument, "auto, tus, ietf or none")
        o.resumable = nil
        o.method = "GET"
        refused(o, upload: true, .invalidArgument, "method must be PUT or POST")
        #expect(try TaskDraft.upload(url: "https://h/u", TaskOptions(), look).kind == .upload)
    }
}
