import FerryBus
import FerryCore
import Foundation
import Testing

/// The Downloads window's Preferences, driven through AT-SPI: each control writes its setting
/// at once (what `ferry config` reads and the agent follows), and shows a change made elsewhere.
@Suite(.serialized) struct PreferencesTests {
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func preferencesWriteTheSettingsAndFollowThem() throws {
        let h = try Harness()
        h.useMemoryBackend()   // Ferry's key file: the window, the CLI and the agent share it
        try h.startAgent(downloadDir: false)
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("key", "ctrl+comma")   // Preferences: the main menu's, or Ctrl+,

        _ = try h.windowDriver("set", "Transfers at once", "3")
        try h.eventually("max-transfers set by the dialog") { try h.config("get", "max-transfers") == "3" }
        try h.eventually("the agent following it") { h.agentLog.contains("setting max-transfers changed") }

        #expect(try h.windowDriver("get", "Notification popups").trimmingCharacters(in: .newlines) == "true")
        _ = try h.windowDriver("toggle", "Notification popups")
        try h.eventually("popups off") { try h.config("get", "popups") == "false" }

        _ = try h.windowDriver("set", "Download limit", "512")
        try h.eventually("the limit set") { try h.config("get", "download-limit") == "512.0 KiB/s" }

        let folder = h.root + "/home/Chosen"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try h.windowDriver("set", "Download folder", folder)
        try h.eventually("the folder set") { try h.config("get", "download-folder") == folder }

        // Changed elsewhere while the dialog is open: the dialog shows it.
        try h.config("set", "keep-ended-days", "7")
        #expect(try h.windowDriver("get", "Keep ended downloads in the list", "7")
            .trimmingCharacters(in: .newlines) == "7")
    }

    /// At the default the folder field is empty: the row under it says where downloads go, as
    /// the agent has it (here its --download-dir, which wins over the setting; issue 57 item 9).
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func theFolderDownloadsGoToIsShown() throws {
        let h = try Harness()
        h.useMemoryBackend()
        try h.startAgent()
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("key", "ctrl+comma")
        _ = try h.windowDriver("label", h.downloads)
    }

    /// The folder field shows a 40-character path whole at the dialog's default size (it was
    /// 33 px wide, showing "chive" of ~/Music/Podcasts/Archive).
    @Test(.enabled(if: Harness.canShowWindows, "needs Xvfb, at-spi2-core, python3-pyatspi and a built ferry-downloads"))
    func theFolderFieldShowsAPathWhole() throws {
        let h = try Harness()
        h.useMemoryBackend()
        let folder = h.root + "/home/Music/Podcasts/Archive"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try h.config("set", "download-folder", folder)
        try h.startAgent(downloadDir: false)
        try h.startDisplay()
        _ = try h.spawnWaitable(Harness.ferry, ["view"])
        _ = try h.windowDriver("key", "ctrl+comma")   // Preferences: the main menu's, or Ctrl+,
        _ = try h.windowDriver("get", "Download folder", folder)
        // GTK 4.8 gives no character extents over AT-SPI: the field is measured against the
        // width 40 characters of the UI font take (7 px each at most in DejaVu Sans 10, the
        // default here), with room to spare.
        let width = Int(try h.windowDriver("width", "Download folder").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(folder.count >= 40 && width >= 40 * 8, "\(folder.count) characters in \(width) px")
    }
}
