import CGLib
import CGtk

/// The Keyboard Shortcuts window GNOME apps have (HIG: Ctrl+? and the main menu), listing the
/// window's shortcuts. GtkShortcutsWindow is built from a UI description, as GTK means it to be.
enum ShortcutsWindow {
    /// Each shortcut (GTK's accelerator syntax) and what it does, in the order shown.
    static let shortcuts: [(keys: String, title: String)] = [
        ("<Control>l", "Type a URL to download"),
        ("<Control><Shift>Delete", "Clear finished downloads"),
        ("<Control>comma", "Preferences"),
        ("<Control>question", "Keyboard shortcuts"),
        ("<Control>w", "Close the window"),
        ("<Control>q", "Quit"),
    ]

    static func show(over parent: Widget) {
        let items = shortcuts.map {
            """
            <child><object class="GtkShortcutsShortcut">
              <property name="accelerator">\(escaped($0.keys))</property>
              <property name="title">\(escaped($0.title))</property>
            </object></child>
            """
        }.joined()
        let ui = """
            <interface><object class="GtkShortcutsWindow" id="shortcuts"><property name="modal">1</property>
            <child><object class="GtkShortcutsSection"><property name="section-name">downloads</property>
            <child><object class="GtkShortcutsGroup"><property name="title">Downloads</property>
            \(items)</object></child></object></child></object></interface>
            """
        let builder = gtk_builder_new_from_string(ui, -1)!
        defer { g_object_unref(cast(builder)) }
        guard let window = gtk_builder_get_object(builder, "shortcuts") else { return }
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_present(cast(window))
    }

    private static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
