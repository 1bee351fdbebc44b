import CGLib
import CGtk
import FerryCore

/// "About Downloads": name, version, licence, website, as GNOME apps show them.
enum About {
    static func show(over parent: Widget) {
        let about = gtk_about_dialog_new()!
        gtk_about_dialog_set_program_name(cast(about), "Downloads")
        gtk_about_dialog_set_version(cast(about), FerryRelease.version)
        gtk_about_dialog_set_comments(cast(about), "Background transfers that survive crashes and reboots, and go on at the next login.")
        gtk_about_dialog_set_logo_icon_name(cast(about), applicationID)
        gtk_about_dialog_set_license_type(cast(about), GTK_LICENSE_APACHE_2_0)
        gtk_about_dialog_set_website(cast(about), "https://ferry.dev/")
        gtk_window_set_transient_for(cast(about), cast(parent))
        gtk_window_set_modal(cast(about), 1)
        gtk_window_present(cast(about))
    }
}
