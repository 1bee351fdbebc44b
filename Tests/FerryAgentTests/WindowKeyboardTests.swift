import FerryCore
import Foundation
import Testing

/// The window from the keyboard, as a screen reader user works it (issue 57 item 8): Space on
/// a row's Pause pauses it and the focus stays on the button that now reads Resume, so a second
/// Space resumes; each row has an accessible name (its file and state).
@Suite struct WindowKeyboardTests {
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func theFocusStaysOnTheToggleAndRowsAreNamed() throws {
        let h = try Harness()
        try h.makeFile("lecture.bin", size: 3_000_000)
        try h.startFaultServer()
        try h.startNotificationServer()
        try h.startAgent()
        let id = try h.ferry("download", h.faultURL("lecture.bin", "rate=100000")).taskID()
        try h.eventually("running") { try h.show(id)["state"] as? String == "running" }
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("focus", "lecture.bin", "Pause")
        _ = try h.windowDriver("key", "space")
        try h.eventually("paused") { try h.show(id)["state"] as? String == "paused" }
        #expect(try h.windowDriver("focused", "Resume").hasPrefix("push button|Resume"), "the focus left the toggle")
        _ = try h.windowDriver("key", "space")
        try h.eventually("running again, from the keyboard alone") { try h.show(id)["state"] as? String == "running" }
        let shown = try JSONDecoder().decode(WindowTests.Shown.self, from: Data(try h.windowDriver("rows", "lecture.bin").utf8))
        #expect(shown.rows.allSatisfy { !$0.name.isEmpty }, "\(shown.rows.map(\.name))")
        #expect(shown.row("lecture.bin")?.name.hasPrefix("lecture.bin, ") == true, "\(shown.rows.map(\.name))")
    }

    /// GNOME's HIG: Ctrl+? opens a Keyboard Shortcuts window listing the window's shortcuts.
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func ctrlQuestionMarkListsTheShortcuts() throws {
        let h = try Harness()
        try h.startNotificationServer()
        try h.startAgent()
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("key", "ctrl+question")
        _ = try h.windowDriver("label", "Type a URL to download")
        _ = try h.windowDriver("label", "Clear finished downloads")
    }
}
