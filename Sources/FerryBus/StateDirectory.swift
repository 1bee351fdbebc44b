import CGLib
import Foundation

/// $XDG_STATE_HOME/ferry (default ~/.local/state/ferry), for the agent and the CLI alike.
/// Per the XDG base directory spec a relative XDG_STATE_HOME is invalid and ignored.
public enum StateDirectory {
    public static var path: String {
        let base = ProcessInfo.processInfo.environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (String(cString: g_get_home_dir()) + "/.local/state")
        return base + "/ferry"
    }
}
