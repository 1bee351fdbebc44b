import CGLib
import CGtk
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Preferences: the agent's settings (GSettings dev.ferry.Agent), each control bound to its
/// key both ways, so a change applies at once (the agent follows the store) and a change made
/// elsewhere (`ferry config`, gsettings) shows here while it is open.
final class PreferencesWindow {
    let window: Widget
    private let store: SettingsStore
    /// The folder's row (libadwaita's entry row: a GtkEditable) and the text field inside it.
    private let folder = adw_entry_row_new()!
    /// The folder typed is applied once typing has paused (not "/", "/h", "/ho"… on the way).
    private var folderTimer: UInt32 = 0
    /// Where downloads go now, whatever the field holds (empty at the default): the agent says.
    private let effectiveFolder = adw_action_row_new()!
    /// Asks the agent where downloads go and shows it (the window's call).
    var askEffectiveFolder: () -> Void = {}

    init(parent: Widget, store: SettingsStore) {
        self.store = store
        window = adw_preferences_window_new()
        gtk_window_set_title(cast(window), "Preferences")
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_set_hide_on_close(cast(window), 1)
        adw_preferences_window_set_search_enabled(cast(window), 0)  // eight settings: nothing to search

        // The folder: typed (applied when typing pauses, if it is a folder: an absolute path, as
        // `ferry config set` checks it; empty for the XDG one) or chosen. A row the page's whole
        // width: a path is read whole.
        adw_preferences_row_set_title(cast(folder), "Download folder")
        let choose = Make.iconButton("folder-open-symbolic", "Choose Folder…") { [unowned self] in chooseFolder() }
        gtk_widget_set_valign(choose, GTK_ALIGN_CENTER)
        adw_entry_row_add_suffix(cast(folder), choose)
        g_settings_bind(
            cast(store.settings), Setting.downloadFolder.rawValue, cast(folder), "text", G_SETTINGS_BIND_GET)
        on(UnsafeMutableRawPointer(folder), "changed") { [unowned self] in folderEdited() }
        if let text = gtk_editable_get_delegate(cast(folder)) { Accessible.label(cast(text), "Download folder") }
        adw_preferences_row_set_title(cast(effectiveFolder), "Downloads go to")
        adw_action_row_set_subtitle(cast(effectiveFolder), XDG.downloadDirectory)

        let page = adw_preferences_page_new()!
        let files = group(
            "Files",
            [
                folder,
                effectiveFolder,
                row(
                    "Keep ended downloads in the list", "Days; 0 keeps them for ever",
                    spin(.keepEndedDays)),
            ])
        let transfers = group(
            "Transfers",
            [
                row("Transfers at once", nil, spin(.maxTransfers)),
                row("Transfers at once to one server", nil, spin(.maxPerHost)),
                row("Download limit", "KiB/s; 0 for none", spin(.downloadLimit, kibibytes: true)),
                row("Upload limit", "KiB/s; 0 for none", spin(.uploadLimit, kibibytes: true)),
                row("Use metered connections", "Mobile data, a hotspot", toggle(.allowMetered)),
            ])
        let popups = group(
            "Notifications",
            [
                row("Notification popups", "Say when a download completes or fails", toggle(.popups))
            ])
        for g in [files, transfers, popups] { adw_preferences_page_add(cast(page), cast(g)) }
        adw_preferences_window_add(cast(window), cast(page))
    }

    /// A titled group of rows.
    private func group(_ title: String, _ rows: [Widget]) -> Widget {
        let g = adw_preferences_group_new()!
        adw_preferences_group_set_title(cast(g), title)
        for r in rows { adw_preferences_group_add(cast(g), r) }
        return g
    }

    /// A row with its control at the end (named after the row's title for screen readers).
    private func row(_ title: String, _ subtitle: String?, _ control: Widget) -> Widget {
        let r = adw_action_row_new()!
        adw_preferences_row_set_title(cast(r), title)
        if let subtitle { adw_action_row_set_subtitle(cast(r), subtitle) }
        gtk_widget_set_valign(control, GTK_ALIGN_CENTER)
        adw_action_row_add_suffix(cast(r), control)
        adw_action_row_set_activatable_widget(cast(r), control)  // libadwaita names the control after the row
        return r
    }

    func present() {
        gtk_window_present(cast(window))
        askEffectiveFolder()
    }

    /// The folder downloads go to when they name none, as the agent reported it.
    func showEffectiveFolder(_ path: String) {
        adw_action_row_set_subtitle(cast(effectiveFolder), VisibleText.escaped(path))
    }

    /// A number in the setting's range (the schema's; shown in KiB where `kibibytes`).
    private func spin(_ setting: Setting, kibibytes: Bool = false) -> Widget {
        let key = setting.rawValue, range = setting.range!, unit: Double = kibibytes ? 1024 : 1
        let s = gtk_spin_button_new_with_range(Double(range.lowerBound) / unit, Double(range.upperBound) / unit, 1)!
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
            g_settings_bind_with_mapping(
                cast(store.settings), key, cast(s), "value", G_SETTINGS_BIND_DEFAULT, get, set, nil, nil)
        } else {
            g_settings_bind(cast(store.settings), key, cast(s), "value", G_SETTINGS_BIND_DEFAULT)
        }
        return s
    }

    private func toggle(_ setting: Setting) -> Widget {
        let s = gtk_switch_new()!
        gtk_widget_set_halign(s, GTK_ALIGN_END)
        g_settings_bind(cast(store.settings), setting.rawValue, cast(s), "active", G_SETTINGS_BIND_DEFAULT)
        return s
    }

    private func folderEdited() {
        if folderTimer != 0 { g_source_remove(folderTimer) }
        // The timer owns a weak reference to the window (released when the timer goes).
        folderTimer = g_timeout_add_full(
            G_PRIORITY_DEFAULT, 700,
            { me in
                guard let window = Box<Weak<PreferencesWindow>>.peek(me!).object else { return 0 }
                window.folderTimer = 0
                window.applyFolder()
                return 0
            }, Box.retained(Weak(self)), Box<Weak<PreferencesWindow>>.release)
    }

    private func applyFolder() {
        let text = String(cString: gtk_editable_get_text(cast(folder)))
        guard text != store.string(.downloadFolder) else { return }
        guard text.isEmpty || Self.isFolder(text) else {
            say("Download folder: \(text) is not a folder")
            return
        }
        apply(.downloadFolder, text)
        askEffectiveFolder()
    }

    private func apply(_ setting: Setting, _ text: String) {
        do {
            try store.set(setting.rawValue, text)
            say(nil)
        } catch {
            say((error as? FerryError)?.message ?? "\(error)")
        }
    }

    /// A problem with what was typed, as a toast over the window (nil: nothing to say).
    private func say(_ text: String?) {
        guard let text else { return }
        adw_preferences_window_add_toast(cast(window), adw_toast_new(text))
    }

    private func chooseFolder() {
        let chooser = gtk_file_chooser_native_new(
            "Download folder", cast(window), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
            "Select", "Cancel")!
        on(UnsafeMutableRawPointer(chooser), "response") { [unowned self] response in
            if Int32(Int(bitPattern: response)) == GTK_RESPONSE_ACCEPT.rawValue,
                let file = gtk_file_chooser_get_file(cast(chooser)), let path = g_file_get_path(file)
            {
                apply(.downloadFolder, String(cString: path))
                g_free(path)
                g_object_unref(cast(file))
            }
            g_object_unref(cast(chooser))
        }
        gtk_native_dialog_show(cast(chooser))
    }

    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
