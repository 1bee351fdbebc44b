import ArgumentParser
import CGLib
import CGtk
import FerryBus
import FerryCore
import FoundationEssentials

/// ferry-downloads: the Downloads window. One instance per user session: AdwApplication owns
/// dev.ferry.Downloads on the session bus, and a second start raises the first window.
/// `ferry view` starts it when a graphical display is there. A command (not bare GTK) so that
/// `--help`, `--version` and the man page come from one definition, as ferry's and ferryd's do.
struct FerryDownloads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry-downloads",
        abstract: "The Ferry Downloads window: your transfers, live, in a GTK 4 and libadwaita window.",
        discussion: """
            Shows every task of the Ferry agent (ferryd) with its progress, and lets you pause, resume, \
            cancel, open and remove them. One window per session: a second start raises the first. \
            Opening it resets the badge on the app icon. `ferry view` starts it on a graphical display \
            and falls back to a text view without one.
            """,
        version: FerryRelease.version)

    func run() throws {
        // The application id is the desktop entry's name and the window's class, so docks and
        // software centres match the window, dev.ferry.Downloads.desktop and the metainfo.
        g_set_prgname(applicationID)
        g_set_application_name("Downloads")
        let client: BusClient
        do { client = try BusClient() } catch {
            fputs("ferry-downloads: \((error as? FerryError)?.message ?? "\(error)")\n", stderr)
            throw ExitCode.failure
        }
        // libadwaita's application: GNOME's styles, and the window follows the desktop's light or
        // dark preference (AdwStyleManager) as it changes.
        let adw = adw_application_new(applicationID, G_APPLICATION_DEFAULT_FLAGS)!
        let app: UnsafeMutablePointer<GtkApplication> = cast(adw)
        var window: DownloadsWindow?
        on(UnsafeMutableRawPointer(app), "activate") {
            if window == nil { window = DownloadsWindow(app: app, client: client) }
            window!.present()
        }
        let status = g_application_run(cast(app), 0, nil)
        window = nil
        g_object_unref(cast(app))
        if status != 0 { throw ExitCode(status) }
    }
}

let applicationID = "dev.ferry.Downloads"
FerryDownloads.main()
