import CGLib
import CGtk
import FerryBus
import FerryCore
import Foundation

/// Preferences: the agent's settings (GSettings dev.ferry.Agent), each control bound to its
/// key both ways, so a change applies at once (the agent follows the store) and a change made
/// elsewhere (`ferry config`, gsettings) shows here while it is open.
final class PreferencesWindow {
    let window: Widget
    private let store: SettingsStore
    private let folder = gtk_entry_new()!
    private let message = Make.label(classes: ["error"])
    /// The folder typed is applied once typing has paused (not "/", "/h", "/ho"… on the way).
    private var folderTimer: UInt32 = 0

    init(parent: Widget, store: SettingsStore) {
        self.store = store
        window = gtk_window_new()
        gtk_window_set_title(cast(window), "Preferences")
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_set_hide_on_close(cast(window), 1)
        gtk_window_set_default_size(cast(window), 520, -1)

        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(cast(grid), 12)
        gtk_grid_set_column_spacing(cast(grid), 18)
        Make.margins(grid, 18, 18)
        var row: Int32 = 0
        func add(_ title: String, _ control: Widget, _ extra: Widget? = nil) {
            let label = Make.label(title)
            gtk_widget_set_hexpand(label, 1)
            gtk_grid_attach(cast(grid), label, 0, row, 1, 1)
            gtk_grid_attach(cast(grid), control, 1, row, extra == nil ? 2 : 1, 1)
            if let extra { gtk_grid_attach(cast(grid), extra, 2, row, 1, 1) }
            Accessible.label(control, title)
            row += 1
        }

        // The folder: typed (applied when typing pauses, if it is a folder: an absolute path,
        // as `ferry config set` checks it; empty for the XDG one) or chosen.
        // On a row of its own under its title, the whole width: a path is read whole.
        gtk_entry_set_placeholder_text(cast(folder), "Your Downloads folder")
        gtk_widget_set_hexpand(folder, 1)
        gtk_editable_set_width_chars(cast(folder), 44)
        g_settings_bind(cast(store.settings), "download-folder", cast(folder), "text", G_SETTINGS_BIND_GET)
        on(UnsafeMutableRawPointer(folder), "changed") { [unowned self] in folderEdited() }
        gtk_grid_attach(cast(grid), Make.label("Download folder"), 0, row, 3, 1)
        row += 1
        gtk_grid_attach(cast(grid), Make.box(false, spacing: 6, [folder, Make.button("Choose…") { [unowned self] in chooseFolder() }]),
                        0, row, 3, 1)
        Accessible.label(folder, "Download folder")
        row += 1
        add("Transfers at once", spin("max-transfers", 1, 1000))
        add("Transfers at once to one server", spin("max-per-host", 1, 1000))
        add("Download limit (KiB/s, 0 for none)", spin("download-limit", 0, 1_073_741_824, kibibytes: true))
        add("Upload limit (KiB/s, 0 for none)", spin("upload-limit", 0, 1_073_741_824, kibibytes: true))
        add("Notification popups", toggle("popups"))
        add("Use metered connections", toggle("allow-metered"))
        add("Keep ended downloads in the list (days, 0 for ever)", spin("keep-ended-days", 0, 36_500))
        gtk_widget_set_visible(message, 0)
        gtk_grid_attach(cast(grid), message, 0, row, 3, 1)
        gtk_window_set_child(cast(window), grid)
    }

    func present() { gtk_window_present(cast(window)) }

    private func spin(_ key: String, _ low: Double, _ high: Double, kibibytes: Bool = false) -> Widget {
        let s = gtk_spin_button_new_with_range(low, high, 1)!
        gtk_widget_set_halign(s, GTK_ALIGN_END)
        if kibibytes {
            // The store keeps bytes per second; people think in KiB/s.
            let get: GSettingsBindGetMapping = { value, variant, _ in
                g_value_set_double(value, Double(g_variant_get_int64(variant)) / 1024)
                return 1
            }
            let set: GSettingsBindSetMapping = { value, _, _ in
                g_variant_new_int64(gint64((g_value_get_double(value) * 1024).rounded()))
            }
            g_settings_bind_with_mapping(cast(store.settings), key, cast(s), "value", G_SETTINGS_BIND_DEFAULT, get, set, nil, nil)
        } else {
            g_settings_bind(cast(store.settings), key, cast(s), "value", G_SETTINGS_BIND_DEFAULT)
        }
        return s
    }

    private func toggle(_ key: String) -> Widget {
        let s = gtk_switch_new()!
        gtk_widget_set_halign(s, GTK_ALIGN_END)
        g_settings_bind(cast(store.settings), key, cast(s), "active", G_SETTINGS_BIND_DEFAULT)
        return s
    }

    private func folderEdited() {
        if folderTimer != 0 { g_source_remove(folderTimer) }
        folderTimer = g_timeout_add_full(G_PRIORITY_DEFAULT, 700, { me in
            let window = Unmanaged<PreferencesWindow>.fromOpaque(me!).takeUnretainedValue()
            window.folderTimer = 0
            window.applyFolder()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    private func applyFolder() {
        let text = String(cString: gtk_editable_get_text(cast(folder)))
        guard text != store.string("download-folder") else { return }
        var isFolder: ObjCBool = false
        guard text.isEmpty || (FileManager.default.fileExists(atPath: text, isDirectory: &isFolder) && isFolder.boolValue) else {
            say("Download folder: \(text) is not a folder")
            return
        }
        apply("download-folder", text)
    }

    private func apply(_ key: String, _ text: String) {
        do {
            try store.set(key, text)
            say(nil)
        } catch {
            say((error as? FerryError)?.message ?? "\(error)")
        }
    }

    private func say(_ text: String?) {
        gtk_label_set_text(cast(message), text ?? "")
        gtk_widget_set_visible(message, text == nil ? 0 : 1)
    }

    private func chooseFolder() {
        let chooser = gtk_file_chooser_native_new("Download folder", cast(window), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                                  "Select", "Cancel")!
        on(UnsafeMutableRawPointer(chooser), "response") { [unowned self] response in
            if Int32(Int(bitPattern: response)) == GTK_RESPONSE_ACCEPT.rawValue,
               let file = gtk_file_chooser_get_file(cast(chooser)), let path = g_file_get_path(file) {
                apply("download-folder", String(cString: path))
                g_free(path)
                g_object_unref(cast(file))
            }
            g_object_unref(cast(chooser))
        }
        gtk_native_dialog_show(cast(chooser))
    }
}
