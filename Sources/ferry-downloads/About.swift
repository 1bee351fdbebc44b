import CGLib
import CGtk
import FerryCore

/// "About Downloads": libadwaita's about window, as GNOME apps show it.
enum About {
    static func show(over parent: Widget) {
        let about: Widget = adw_about_window_new()!
        let w: OpaquePointer = cast(about)
        adw_about_window_set_application_name(w, "Downloads")
        adw_about_window_set_application_icon(w, applicationID)
        adw_about_window_set_version(w, FerryRelease.version)
        adw_about_window_set_developer_name(w, "The Ferry developers")
        adw_about_window_set_comments(
            w,
            "Background transfers that survive crashes and reboots, "
                + "and go on at the next login.")
        adw_about_window_set_license_type(w, GTK_LICENSE_APACHE_2_0)
        adw_about_window_set_website(w, "https://ferry.dev/")
        gtk_window_set_transient_for(cast(about), cast(parent))
        gtk_window_set_modal(cast(about), 1)
        gtk_window_present(cast(about))
    }
}
