import CGLib
import FoundationEssentials

/// Where things live per the XDG specs, for the agent, the library and the CLI alike.
public enum XDG {
    public static var home: String { String(cString: g_get_home_dir()) }
    /// $XDG_CONFIG_HOME (~/.config).
    public static var configHome: String { String(cString: g_get_user_config_dir()) }

    /// $XDG_STATE_HOME/ferry (default ~/.local/state/ferry). Per the XDG base directory spec a
    /// relative XDG_STATE_HOME is invalid and ignored.
    public static var stateDirectory: String {
        let base =
            ProcessInfo.processInfo.environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (home + "/.local/state")
        return base + "/ferry"
    }

    /// The user's folder of a kind (xdg-user-dirs, read afresh), else ~/`fallback`. Never made
    /// here: only the folder a download is saved into is made, when it is (Finalizer). A user
    /// dir set to the home folder itself (xdg-user-dirs' way of saying "none") counts as unset.
    public static func userDirectory(_ kind: GUserDirectory, fallback: String) -> String {
        g_reload_user_special_dirs_cache()
        if let p = g_get_user_special_dir(kind) {
            let dir = String(cString: p)
            if dir != home { return dir }
        }
        return home + "/" + fallback
    }

    public static var downloadDirectory: String { userDirectory(G_USER_DIRECTORY_DOWNLOAD, fallback: "Downloads") }
    public static var documentsDirectory: String { userDirectory(G_USER_DIRECTORY_DOCUMENTS, fallback: "Documents") }
    public static var desktopDirectory: String { userDirectory(G_USER_DIRECTORY_DESKTOP, fallback: "Desktop") }
    public static var musicDirectory: String { userDirectory(G_USER_DIRECTORY_MUSIC, fallback: "Music") }
    public static var picturesDirectory: String { userDirectory(G_USER_DIRECTORY_PICTURES, fallback: "Pictures") }
    public static var videosDirectory: String { userDirectory(G_USER_DIRECTORY_VIDEOS, fallback: "Videos") }
}
