import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The Downloads window (ferry-downloads, GTK 4) on Xvfb, read and driven through the
/// accessibility bus as a screen reader would, against the real agent.
@Suite(.serialized) struct WindowTests {
    struct Shown: Decodable {
        struct Row: Decodable { var name: String; var labels: [String]; var buttons: [String]; var progress: [String] }
        var title: String
        var buttons: [String]
        var rows: [Row]
        func row(_ name: String) -> Row? { rows.first { $0.labels.contains(name) } }
    }

    func badge(_ h: Harness) throws -> Int? {
        try AgentProxy(h.client()).getStatus().badge
    }

    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func theWindowListsDownloadsAndItsButtonsActOnTheAgent() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.startAgent(["--stall-timeout", "60"])   // the held download must not time out meanwhile
        try h.makeFile("report.pdf", size: 2_000)
        try h.makeFile("movie.bin", size: 200_000)
        #expect(try h.ferry("download", h.faultURL("report.pdf"), "--wait").status == 0)
        let running = try #require(Int64(try h.ferry("download", h.faultURL("movie.bin", "hold=1000")).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("the download holding") { (try h.show(running)["received"] as? Int) == 1000 }
        #expect(try badge(h) == 1)

        try h.startDisplay()
        let window = try h.spawnWaitable(Harness.ferry, ["view"])   // a display: the window, not text
        let shown = try JSONDecoder().decode(Shown.self, from: Data(try h.windowDriver("rows", "report.pdf", "movie.bin").utf8))
        #expect(shown.title == "Downloads")
        // The header bar's frequent action; Preferences is in the main menu (Ctrl+,), not twice.
        #expect(shown.buttons.contains("Clear Finished") && !shown.buttons.contains("Preferences"))
        let finished = try #require(shown.row("report.pdf"))
        #expect(finished.buttons == ["Open", "Show in Folder", "Remove from List"])
        #expect(finished.progress.isEmpty)
        let active = try #require(shown.row("movie.bin"))
        #expect(active.progress == ["Progress of movie.bin"])
        #expect(active.buttons == ["Pause", "Cancel"])
        #expect(active.labels.contains("Active") && finished.labels.contains("Finished"))
        try h.eventually("the badge reset by the window") { try badge(h) == 0 }

        // Pause pauses that task in the agent; the row follows (Resume appears) and resumes it.
        _ = try h.windowDriver("press", "movie.bin", "Pause")
        try h.eventually("paused") { try h.show(running)["state"] as? String == "paused" }
        _ = try h.windowDriver("press", "movie.bin", "Resume")
        try h.eventually("resumed") { try h.show(running)["state"] as? String != "paused" }
        // Resumed from its bytes (a range request, which the server does not hold), the download
        // finishes: its row moves to Finished. The next press waits for that move, which makes the list's rows anew (a press
        // on a row being replaced can go to the old one).
        _ = try h.windowDriver("has", "movie.bin", "Open")

        // Remove from list removes the row and the task, never the file.
        let done = try #require(try AgentProxy(h.client()).allTasks(session: nil).first { $0.state == .completed })
        let report = try #require(done.file)
        _ = try h.windowDriver("press", "report.pdf", "Remove from List")
        _ = try h.windowDriver("gone", "report.pdf")
        #expect(try AgentProxy(h.client()).allTasks(session: nil).map(\.id) == [running])
        #expect(FileManager.default.fileExists(atPath: report))

        // A URL pasted into the field starts a download; it shows up as a row and finishes.
        try h.makeFile("pasted.txt", size: 3_000)
        _ = try h.windowDriver("type", "URL to download", h.faultURL("pasted.txt"))
        _ = try h.windowDriver("press", "-", "Download")
        _ = try h.windowDriver("has", "pasted.txt", "Open")   // its row, finished
        try h.eventually("the pasted download") {
            try AgentProxy(h.client()).allTasks(session: nil).contains { $0.url.hasSuffix("/pasted.txt") && $0.state == .completed }
        }

        // One instance: a second `ferry view` hands over to the first window and ends.
        #expect(try h.run(Harness.ferry, ["view"]).status == 0)
        #expect(window.isRunning)
    }

    /// A row waiting to retry: one way forward ("Retry Now", Cancel; no Pause beside Resume), no
    /// still pulse for a size nobody knows, the retry time as the locale writes it (en_US: "2:03
    /// PM", not a fixed "14:03:00"); and the URL field refuses what the agent refuses (ftp://).
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func aWaitingRowReadsRightAndTheFieldRefusesFTP() throws {
        let h = try Harness()
        try h.startAgent(["--retry-base-ms", "600000", "--retry-cap-ms", "600000"])
        let closed = "http://127.0.0.1:\(try Harness.freePort())/nothing.bin"
        let id = try #require(Int64(try h.ferry("download", closed).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("waiting to retry") { try h.show(id)["reason"] as? String == "retry" }

        try h.useLocale("en_US.UTF-8")
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        let shown = try JSONDecoder().decode(Shown.self, from: Data(try h.windowDriver("rows", "nothing.bin").utf8))
        let row = try #require(shown.row("nothing.bin"))
        #expect(row.buttons == ["Retry Now", "Cancel"])
        #expect(row.progress.isEmpty)
        let retrying = try #require(row.labels.first { $0.hasPrefix("Retrying at ") })
        // "Retrying at 9:26 PM · 0 bytes": the locale's clock, from its own data
        let twelveHour = #"^Retrying at \d{1,2}:\d\d [AP]M"#
        #expect(retrying.range(of: twelveHour, options: .regularExpression) != nil, "\(retrying)")

        _ = try h.windowDriver("type", "URL to download", "ftp://example.org/file.iso")
        _ = try h.windowDriver("press", "-", "Download")
        let after = try JSONDecoder().decode(Shown.self, from: Data(try h.windowDriver("rows", "nothing.bin").utf8))
        #expect(after.rows.count == 1)
        #expect(try AgentProxy(h.client()).allTasks(session: nil).count == 1)
    }

    /// Cancel offers Undo: the task pauses at once (its bytes kept); Undo resumes it; without
    /// Undo it is canceled when the toast goes. (Held downloads: a row that does not change
    /// while it is pressed.)
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func cancelCanBeUndone() throws {
        let h = try Harness()
        try h.makeFile("kept.bin", size: 100_000)
        try h.makeFile("dropped.bin", size: 100_000)
        try h.startFaultServer()
        try h.startAgent(["--stall-timeout", "60"])
        func held(_ name: String) throws -> Int64 {
            let id = try #require(Int64(try h.ferry("download", h.faultURL(name, "hold=1000")).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            try h.eventually("\(name) holding") { (try h.show(id)["received"] as? Int) == 1000 }
            return id
        }
        let kept = try held("kept.bin"), dropped = try held("dropped.bin")
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("rows", "kept.bin", "dropped.bin")

        _ = try h.windowDriver("press", "kept.bin", "Cancel")
        try h.eventually("paused, not canceled, while Undo is offered") { try h.show(kept)["state"] as? String == "paused" }
        _ = try h.windowDriver("press", "-", "Undo")
        try h.eventually("going on from its bytes") { ["running", "completed"].contains(try h.show(kept)["state"] as? String ?? "") }

        _ = try h.windowDriver("press", "dropped.bin", "Cancel")
        try h.eventually("paused first") { try h.show(dropped)["state"] as? String == "paused" }
        try h.eventually("canceled once the toast went", timeout: 20) { try h.show(dropped)["state"] as? String == "canceled" }
        #expect(try h.show(kept)["state"] as? String != "canceled")
    }

    /// An upload's row: named after the file sent, its bytes sent (with rate and time left) while
    /// it runs; once done, where it went, the server's status and its reply to open.
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func anUploadsRowSaysWhatIsSent() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("up.bin", size: 600_000)
        try h.makeFile("done.bin", size: 1_000)
        #expect(try h.ferry("upload", h.www + "/done.bin", h.faultURL("upload/done.bin"), "--wait").status == 0)
        #expect(try h.ferry("upload", h.www + "/up.bin", h.faultURL("upload/up.bin"), "--resumable", "none", "--max-rate", "100K").status == 0)
        try h.startDisplay()
        let window = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = window
        let shown = try JSONDecoder().decode(Shown.self, from: Data(try h.windowDriver("rows", "up.bin", "done.bin").utf8))
        let running = try #require(shown.row("up.bin"))
        #expect(running.labels.contains { $0.hasPrefix("Sent ") && $0.contains(" of 600.0") }, "\(running.labels)")   // sizes have a no-break space
        #expect(running.progress == ["Progress of up.bin"])
        let done = try #require(shown.row("done.bin"))
        #expect(done.labels.contains { $0.hasPrefix("Sent 1.0") && $0.contains(" to 127.0.0.1 · answered 201 · ") }, "\(done.labels)")
        // The server's answer is there to read (issue 43, item 6).
        #expect(done.buttons == ["Open Reply", "Remove from List"], "\(done.buttons)")
    }

    /// Enter on a row, or a double click on it, opens its file with the desktop's default app
    /// (GIO; here a recorder the desktop's MIME settings name for PDFs). Real input events.
    @Test(.enabled(if: Harness.canShowWindows && Harness.canSendInput, "needs Xvfb, at-spi2-core, python3-pyatspi, xdotool and a built ferry-downloads"))
    func activatingARowOpensItsFile() throws {
        let h = try Harness()
        try h.startFaultServer()
        let (_, opened) = try h.pdfOpenerDesktop()
        try h.startAgent()
        try Data("%PDF-1.4\n%test\n".utf8).write(to: URL(fileURLWithPath: h.www + "/paper.pdf"))
        #expect(try h.ferry("download", h.faultURL("paper.pdf"), "--wait").status == 0)
        try h.startDisplay()
        // The MIME database (which type a .pdf is) lives in /usr/share.
        _ = try h.spawnWaitable(Harness.ferry, ["view"], environment: ["XDG_DATA_DIRS": "/usr/share"])
        _ = try h.windowDriver("activate", "paper.pdf", "enter")
        try h.eventually("Enter opened the file") {
            (try? String(contentsOfFile: opened, encoding: .utf8)) == h.downloads + "/paper.pdf\n"
        }
        _ = try h.windowDriver("activate", "paper.pdf", "double-click")
        try h.eventually("a double click opened it again") {
            (try? String(contentsOfFile: opened, encoding: .utf8))?.split(separator: "\n").count == 2
        }
    }

    /// A running download's row stays put while its figures move (twice a second): the Pause
    /// button a screen reader found is the same object 5 s later, and pressing it through
    /// AT-SPI pauses the task, ten times in a row (before, each update rebuilt the row and a
    /// press often went to an object already gone).
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func aRunningRowStaysPutForAScreenReader() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startNginx()
        try FileManager.default.createDirectory(atPath: h.www + "/slow", withIntermediateDirectories: true)
        try h.makeFile("slow/lecture.bin", size: 8_000_000)   // 20 kB/s: minutes of progress
        try h.startAgent()
        let id = try h.ferry("download", "http://127.0.0.1:\(h.nginxPort)/slow/lecture.bin").taskID()
        try h.eventually("running") { (try h.show(id)["received"] as? Int ?? 0) > 0 }
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("has", "lecture.bin", "Pause")
        let before = try h.show(id)["received"] as? Int ?? 0
        #expect(try h.windowDriver("keeps", "lecture.bin", "Pause", "5").contains("same"))
        #expect((try h.show(id)["received"] as? Int ?? 0) > before + 40_000, "the figures moved meanwhile")
        for round in 1...10 {
            _ = try h.windowDriver("press", "lecture.bin", "Pause")
            try h.eventually("paused, round \(round)", timeout: 10) { try h.show(id)["state"] as? String == "paused" }
            _ = try h.windowDriver("press", "lecture.bin", "Resume")
            try h.eventually("running, round \(round)", timeout: 10) { try h.show(id)["state"] as? String == "running" }
        }
    }

    /// A download waiting for a proxy's password (407) is given it in the window, as a user
    /// would: Log In… on its row, the user and password in the dialog (the password field hides
    /// what is typed), Log In; it completes.
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func aProxysPasswordIsGivenInTheWindow() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startNginx()
        let data = try h.makeFile("handout.pdf", size: 20_000)
        let proxy = try ProxyTests.startProxy(h, auth: "ferry:s3cret")
        try h.startAgent(environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)", "XDG_CURRENT_DESKTOP": "", "GSETTINGS_BACKEND": "memory"])
        let id = try h.ferry("download", "http://\(ProxyTests.hiddenHost)/handout.pdf").taskID()
        try h.eventually("waiting for credentials") { try h.show(id)["reason"] as? String == "credentials" }
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("press", "handout.pdf", "Log In…")
        _ = try h.windowDriver("set", "User", "ferry")
        _ = try h.windowDriver("set", "Password", "s3cret")
        _ = try h.windowDriver("click", "Log In")
        try h.eventually("completed") { try h.show(id)["state"] as? String == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(try h.show(id)["file"] as? String))) == data)
    }

    /// GNOME's HIG: Clear Finished cannot be pressed with nothing to clear, and can once a
    /// download has finished; row buttons are icons whose tooltip and accessible name say what
    /// they do, in header capitalization.
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func clearFinishedOnlyWhenThereIsSomethingToClear() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startFaultServer()
        try h.makeFile("notes.txt", size: 1_000)
        try h.startAgent()
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        #expect(try h.windowDriver("enabled", "Clear Finished", "false").hasPrefix("false"))
        #expect(try h.ferry("download", "--wait", h.faultURL("notes.txt")).status == 0)
        #expect(try h.windowDriver("enabled", "Clear Finished", "true").hasPrefix("true"))
        let shown = try JSONDecoder().decode(Shown.self, from: Data(try h.windowDriver("rows", "notes.txt").utf8))
        #expect(shown.row("notes.txt")?.buttons == ["Open", "Show in Folder", "Remove from List"])
    }

    /// The window follows the desktop's light or dark style as the user switches it: GNOME's
    /// color-scheme setting (org.gnome.desktop.interface, through dconf on the test's bus, which
    /// libadwaita reads where no settings portal runs), read off the screen the X server shows.
    @Test(.enabled(if: Harness.canShowWindows && FileManager.default.isExecutableFile(atPath: "/usr/bin/xwd"),
                   "needs Xvfb, at-spi2-core, python3-pyatspi, xwd (x11-apps) and a built ferry-downloads"))
    func theWindowFollowsTheDesktopsDarkStyle() throws {
        let h = try Harness()
        try h.enableDconf()
        try h.startAgent()
        try h.startDisplay()
        func scheme(_ value: String) throws {
            let r = try h.run("/usr/bin/gsettings", ["set", "org.gnome.desktop.interface", "color-scheme", value])
            #expect(r.status == 0, "\(r.stderr)")
        }
        // The list's empty page, under the header bar and the URL field.
        func page() throws -> Double { try h.luminance(x: 40, y: 200, width: 400, height: 200) }
        try scheme("prefer-dark")
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("has", "-", "Download")
        try h.eventually("dark at the start") { try page() < 0.3 }
        try scheme("default")
        try h.eventually("light once the desktop is") { try page() > 0.7 }
        try scheme("prefer-dark")
        try h.eventually("dark again") { try page() < 0.3 }
    }
}
