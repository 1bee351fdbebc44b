import CGLib
import CGtk
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// A finished file handed to the desktop: opened with its default app, or shown in the file
/// manager.
enum DesktopFiles {
    static func uri(_ path: String) -> String? {
        guard let u = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { g_free(u) }
        return String(cString: u)
    }

    /// The file with the desktop's default app for it, through GIO; `say` hears why not.
    static func open(_ file: String, say: (String) -> Void) {
        guard let uri = uri(file) else { return }
        guard FileManager.default.fileExists(atPath: file) else {
            say("\(file) is no longer there (moved or deleted)"); return
        }
        let context = gdk_display_get_app_launch_context(gdk_display_get_default())
        g_app_info_launch_default_for_uri_async(
            uri, cast(context), nil,
            { _, result, _ in
                var error: UnsafeMutablePointer<GError>?
                if g_app_info_launch_default_for_uri_finish(result, &error) == 0 {
                    fputs("ferry-downloads: cannot open: \(String(cString: error!.pointee.message))\n", stderr)
                    g_clear_error(&error)
                }
            }, nil)
        g_object_unref(cast(context))
    }

    /// The file manager, showing the file selected (org.freedesktop.FileManager1), or else the folder.
    static func showInFolder(_ file: String, client: BusClient) {
        guard let fileURI = uri(file) else { return }
        let folder = PathName.folder(of: file)
        client.sendRaw(
            destination: "org.freedesktop.FileManager1", path: "/org/freedesktop/FileManager1",
            interface: "org.freedesktop.FileManager1", method: "ShowItems",
            args: [.strings([fileURI]), .string("")]
        ) { result in
            guard case .failure = result, let folderURI = uri(folder) else { return }
            let context = gdk_display_get_app_launch_context(gdk_display_get_default())
            g_app_info_launch_default_for_uri_async(folderURI, cast(context), nil, nil, nil)
            g_object_unref(cast(context))
        }
    }
}
