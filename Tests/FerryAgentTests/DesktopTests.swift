import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Popups and the badge, against a notification server on the private bus.
@Suite(.serialized) struct DesktopTests {
    func badge(_ h: Harness) throws -> Int? {
        try h.client().call("GetStatus").first?.dictValue?["badge"]?.int64Value.map(Int.init)
    }

    @Test func completedDownloadRaisesOnePopupAndTheBadge() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "200"])
        try h.makeFile("report.pdf", size: 2000)
        #expect(try h.ferry("download", h.faultURL("report.pdf"), "--wait").status == 0)
        try h.eventually("a popup") { try !h.popups().isEmpty }
        let p = try #require(try h.popups().first)
        #expect(p.summary == "Download complete!")
        #expect(p.body == "report.pdf")
        #expect(p.hints["sound-name"] == .string("complete-download"))
        #expect(p.hints["category"] == .string("transfer.complete"))
        #expect(p.hints["desktop-entry"] == .string("ferry"))
        #expect(p.actions == ["default", "Open", "open", "Open", "show", "Show in Folder"])
        #expect(try badge(h) == 1)
        // The badge survives a restart; the viewer resets it.
        h.killAgent(signal: SIGTERM)
        try h.startAgent()
        #expect(try badge(h) == 1)
        let view = try h.ferry("view")
        #expect(view.status == 0 && view.stdout.contains(h.downloads + "/report.pdf"), "\(view.stdout)")
        #expect(try badge(h) == 0)
    }

    @Test func burstsAreCoalescedAndFailuresSaidOnce() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "1500"])
        for i in 1...3 { try h.makeFile("b\(i).bin", size: 1000) }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("app"), .dict([:])])
        let requests: [Value] = (1...3).map { .tuple([.string(h.faultURL("b\($0).bin")), .dict([:])]) }
            + [.tuple([.string(h.faultURL("missing.bin")), .dict([:])])]
        _ = try c.call("CreateDownloads", [.string("app"), .array(requests, elementType: "(sa{sv})")])
        try h.eventually("popups") { try h.popups().count == 2 }
        let popups = try h.popups()
        #expect(popups.map(\.summary).sorted() == ["3 downloads complete", "Download failed"])
        let failed = try #require(popups.first { $0.summary == "Download failed" })
        #expect(failed.body.contains("missing.bin") && failed.body.contains("404"))
        #expect(failed.hints["category"] == .string("transfer.error"))
        #expect(failed.icon == "dialog-error" && popups.first { $0.summary == "3 downloads complete" }?.icon == "folder-download")
        #expect(try badge(h) == 3)
    }

    @Test func launcherEntryPublishesTheBadgeToDocks() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "50"])
        let monitorLog = h.root + "/monitor.txt"
        try h.spawn("/usr/bin/gdbus", ["monitor", "--session", "--dest", BusNames.agent], output: monitorLog)
        try h.eventually("monitor attached") { ((try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? "").contains("Monitoring") }
        func query() throws -> [String: Value] {
            let r = try h.client().callRaw(destination: BusNames.agent, path: "/dev/ferry/LauncherEntry",
                                           interface: "com.canonical.Unity.LauncherEntry", method: "Query", args: [])
            #expect(r.first?.stringValue == "application://dev.ferry.Downloads.desktop")
            return r.last?.dictValue ?? [:]
        }
        #expect(try query()["count"] == .int64(0))
        try h.makeFile("d.bin", size: 100)
        #expect(try h.ferry("download", h.faultURL("d.bin"), "--wait").status == 0)
        try h.eventually("badge 1 signalled") {
            ((try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? "")
                .contains("com.canonical.Unity.LauncherEntry.Update ('application://dev.ferry.Downloads.desktop', {'count': <int64 1>, 'count-visible': <true>")
        }
        #expect(try query()["count"] == .int64(1))
        #expect(try query()["count-visible"] == .bool(true))
        #expect(try h.ferry("view").status == 0)
        try h.eventually("badge 0 signalled after badge 1") {
            let text = (try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? ""
            guard let one = text.range(of: "{'count': <int64 1>") else { return false }
            return text[one.upperBound...].contains("{'count': <int64 0>, 'count-visible': <false>")
        }
        #expect(try query()["count"] == .int64(0))
    }

    @Test func clickingAPopupResetsTheBadge() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "100"])
        try h.makeFile("k.txt", size: 10)
        #expect(try h.ferry("download", h.faultURL("k.txt"), "--wait").status == 0)
        try h.eventually("a popup") { try !h.popups().isEmpty }
        #expect(try badge(h) == 1)
        let id = try h.popups()[0].id
        _ = try h.client().callRaw(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "dev.ferry.Test", method: "Invoke", args: [.uint32(UInt32(id)), .string("show")])
        try h.eventually("badge reset") { try badge(h) == 0 }
    }

    @Test func openActionAndFerryOpenUseXdgOpen() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        let (env, opened) = try h.pdfOpenerDesktop()
        try h.startAgent(["--popup-window-ms", "100"], environment: env)
        try Data("%PDF-1.4\n%test\n".utf8).write(to: URL(fileURLWithPath: h.www + "/paper.pdf"))
        #expect(try h.ferry("download", h.faultURL("paper.pdf"), "--wait").status == 0)
        try h.eventually("a popup") { try !h.popups().isEmpty }
        _ = try h.client().callRaw(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "dev.ferry.Test", method: "Invoke", args: [.uint32(UInt32(try h.popups()[0].id)), .string("default")])
        try h.eventually("xdg-open ran the PDF handler") {
            (try? String(contentsOfFile: opened, encoding: .utf8)) == h.downloads + "/paper.pdf\n"
        }
        #expect(try badge(h) == 0)
        // The same through the CLI.
        let r = try h.run(Harness.ferry, ["open", "--latest"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        try h.eventually("opened twice") {
            (try? String(contentsOfFile: opened, encoding: .utf8))?.split(separator: "\n").count == 2
        }
        // Show in folder (on a new popup: a clicked one is closed): no file manager on this
        // bus, so xdg-open opens the folder.
        try Data("%PDF-1.4\n%two\n".utf8).write(to: URL(fileURLWithPath: h.www + "/two.pdf"))
        #expect(try h.ferry("download", h.faultURL("two.pdf"), "--wait").status == 0)
        try h.eventually("a second popup") { try h.popups().count == 2 }
        let popupID = try h.popups()[1].id
        _ = try h.client().callRaw(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "dev.ferry.Test", method: "Invoke", args: [.uint32(UInt32(popupID)), .string("show")])
        try h.eventually("folder opened") {
            (try? String(contentsOfFile: opened, encoding: .utf8))?.split(separator: "\n").contains(Substring(h.downloads)) == true
        }
        // A file that was moved away gets a clear error.
        try FileManager.default.removeItem(atPath: h.downloads + "/two.pdf")   // the latest
        let gone = try h.run(Harness.ferry, ["open", "--latest"], environment: env)
        #expect(gone.status != 0 && gone.stderr.contains("no longer there"))
    }

    @Test func aSessionCanTurnPopupsOff() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "50"])
        try h.makeFile("quiet.bin", size: 10)
        try h.makeFile("loud.bin", size: 10)
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("quiet"), .dict(["popups": .bool(false)])])
        #expect(try h.ferry("download", h.faultURL("quiet.bin"), "--session", "quiet", "--wait").status == 0)
        // A popup-raising download afterwards is the marker: only it may show up.
        #expect(try h.ferry("download", h.faultURL("loud.bin"), "--wait").status == 0)
        try h.eventually("the loud popup") { try !h.popups().isEmpty }
        #expect(try h.popups().map(\.body) == ["loud.bin"])
    }

    @Test func noNotificationServerStillCompletes() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "50"])
        for i in 1...2 {
            try h.makeFile("q\(i).bin", size: 100)
            #expect(try h.ferry("download", h.faultURL("q\(i).bin"), "--wait").status == 0)
        }
        try h.eventually("the agent noticed") { h.agentLog.contains("no notification server") }
        #expect(h.agentLog.components(separatedBy: "no notification server").count == 2, "logged once")
        #expect(h.agent?.isRunning == true)
    }

    /// A $DISPLAY no server answers (a stale one over SSH): the text view, said once on stderr,
    /// and the badge reset, instead of GTK's "cannot open display".
    @Test func anUnreachableDisplayGivesTheTextView() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("notes.txt", size: 500)
        #expect(try h.ferry("download", h.faultURL("notes.txt"), "--wait").status == 0)
        #expect(try badge(h) == 1)
        var free = 90
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(free)") { free += 1 }
        let view = try h.run(Harness.ferry, ["view"], environment: ["DISPLAY": ":\(free)", "WAYLAND_DISPLAY": ""])
        #expect(view.status == 0 && view.stdout.contains(h.downloads + "/notes.txt"), "\(view.stdout) \(view.stderr)")
        #expect(view.stderr.contains("cannot be reached"), "\(view.stderr)")
        #expect(try badge(h) == 0)
    }

    /// Popup bodies are markup for the servers that read it: a server-chosen name and reason
    /// arrive escaped, cut to what a popup shows (issue 38, item 6).
    @Test func serverChosenNamesAreEscapedInPopups() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--popup-window-ms", "100"])
        try h.makeFile("m.txt", size: 10)
        let name = "<img src=x onerror=y>&.txt"
        let cd = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try h.ferry("download", h.faultURL("m.txt", "cd=\(cd)"), "--wait").status == 0)
        try h.eventually("a popup") { try !h.popups().isEmpty }
        let body = try h.popups()[0].body
        #expect(body == "&lt;img src=x onerror=y&gt;&amp;.txt", "\(body)")
    }
}
