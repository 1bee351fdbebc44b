import FoundationEssentials
import FerryBus
import FerryCore
import Glibc

/// `ferry view` on a desktop: the Downloads window (`ferry-downloads`, next to this executable
/// or on PATH) replaces this process, so the CLI itself never loads GTK.
enum DownloadsWindowLauncher {
    static var displayAvailable: Bool {
        let env = ProcessInfo.processInfo.environment
        return !(env["WAYLAND_DISPLAY"] ?? "").isEmpty || !(env["DISPLAY"] ?? "").isEmpty
    }

    static var executable: String? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let dirs =
            [PathName.folder(of: me)]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return dirs.map { $0 + "/ferry-downloads" }.first { access($0, X_OK) == 0 }
    }

    static func exec(_ path: String) {
        fflush(stdout)
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        execv(path, argv)
        Output.error(
            "cannot start the Downloads window \(path): \(String(cString: strerror(errno))); showing the text view")
    }
}
