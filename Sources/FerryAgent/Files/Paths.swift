import CGLib
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Where the agent keeps things, per the XDG base directory spec.
public enum Paths {
    /// $XDG_STATE_HOME/ferry (default ~/.local/state/ferry).
    public static var defaultStateDirectory: String { XDG.stateDirectory }

    /// mkdir -p with a mode for the directories it creates; true when the directory exists.
    @discardableResult
    public static func mkdirAll(_ path: String, mode: mode_t) -> Bool {
        g_mkdir_with_parents(path, Int32(mode)) == 0
    }

    public static func isWritableDirectory(_ path: String) -> Bool { writableDirectory(path) != nil }

    /// What stat(2) says of a folder this process may create files in (nil: it may not).
    static func writableDirectory(_ path: String) -> stat? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, access(path, W_OK | X_OK) == 0 else { return nil }
        return st
    }
}
