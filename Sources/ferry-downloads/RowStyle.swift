import CGLib
import CGtk

/// The list's focus ring around a row's body only: a section's heading ("Active", "Finished")
/// sits in its first row's list item (GTK 4.8 has no list sections), and a ring around both
/// read as if the heading were part of the download.
enum RowStyle {
    private static let css = """
        listview.ferry-list > row:focus-visible { outline-color: transparent; }
        listview.ferry-list > row:focus-visible .ferry-row-body {
          outline: 2px solid alpha(@accent_color, 0.5); outline-offset: 3px; border-radius: 6px;
        }
        """

    static func apply(to view: Widget) {
        gtk_widget_add_css_class(view, "ferry-list")
        guard let display = gdk_display_get_default(), let provider = gtk_css_provider_new() else { return }
        gtk_css_provider_load_from_data(provider, css, -1)
        gtk_style_context_add_provider_for_display(
            display, cast(provider), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
        g_object_unref(cast(provider))
    }
}
