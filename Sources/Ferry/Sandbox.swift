import Foundation

/// Is this app in a Flatpak or Snap sandbox? The agent then lets it name only its own folders
/// and relaunches it only as itself, so the library hands files for upload over open and sends
/// no launch command.
enum Sandbox {
    static let isSandboxed =
        FileManager.default.fileExists(atPath: "/.flatpak-info")
        || !(ProcessInfo.processInfo.environment["SNAP_NAME"] ?? "").isEmpty
}
