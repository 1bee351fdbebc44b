import CGLib
import CGtk
import FerryBus
import FerryCore
import Foundation

// ferry-downloads: the Downloads window. One instance per user session: GtkApplication owns
// dev.ferry.Downloads on the session bus, and a second start raises the first window.
// `ferry view` starts it when a graphical display is there.

let applicationID = "dev.ferry.Downloads"
g_set_prgname("ferry")   // WM_CLASS "ferry": docks match the window with ferry.desktop
g_set_application_name("Downloads")

let client: BusClient
do { client = try BusClient() } catch {
    FileHandle.standardError.write("ferry-downloads: \((error as? FerryError)?.message ?? "\(error)")\n".data(using: .utf8)!)
    exit(1)
}

let app = gtk_application_new(applicationID, G_APPLICATION_DEFAULT_FLAGS)!
var window: DownloadsWindow?
on(UnsafeMutableRawPointer(app), "activate") {
    if window == nil { window = DownloadsWindow(app: app, client: client) }
    window!.present()
}
let status = g_application_run(cast(app), 0, nil)
window = nil
g_object_unref(cast(app))
exit(status)
