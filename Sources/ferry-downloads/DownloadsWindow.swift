import CGLib
import CGtk
import FerryBus
import FerryCore
import FoundationEssentials

/// The Downloads window: a URL field, the task list (or a friendly empty state), "Clear
/// finished", and a line for the last error. Opening or focusing it resets the badge.
final class DownloadsWindow {
    let window: Widget
    private let client: BusClient
    private let list: TaskList
    private let stack = gtk_stack_new()!
    private let entry = gtk_entry_new()!
    private let message = Make.label(classes: ["error"])
    private let toast = Toast()
    /// The agent's settings (nil: the schema is not installed, as in a build run from its folder).
    private let settings: SettingsStore?
    private var preferences: PreferencesWindow?
    private lazy var clearButton: Widget = Make.button("Clear Finished") { [unowned self] in
        send(AgentCalls.clearFinished(session: "")) { _ in }
    }
    /// The rows GTK shows, by position: updated in place when their task changes.
    private var boundRows: [Int: TaskRowView] = [:]

    init(app: UnsafeMutablePointer<GtkApplication>, client: BusClient) {
        self.client = client
        settings = try? SettingsStore()
        list = TaskList(client: client)
        window = adw_application_window_new(app)
        gtk_window_set_title(cast(window), "Downloads")
        gtk_window_set_default_size(cast(window), 760, 560)

        let header = adw_header_bar_new()!
        // The header bar has the frequent action; Preferences and About are in the main menu.
        adw_header_bar_pack_end(cast(header), mainMenu())
        adw_header_bar_pack_start(cast(header), clearButton)
        // Shortcuts: Ctrl+, preferences, Ctrl+L the URL field, Ctrl+W closes, Ctrl+Q quits.
        let map = UnsafeMutableRawPointer(window)
        action(map, app, "preferences", keys: ["<Control>comma"]) { [unowned self] in showPreferences() }
        action(map, app, "focus-url", keys: ["<Control>l"]) { [unowned self] in _ = gtk_widget_grab_focus(entry) }
        action(map, app, "close", keys: ["<Control>w"]) { [unowned self] in gtk_window_close(cast(window)) }
        action(map, app, "clear-finished", keys: ["<Control><Shift>Delete"]) { [unowned self] in
            send(AgentCalls.clearFinished(session: "")) { _ in }
        }
        action(map, app, "about", keys: []) { [unowned self] in About.show(over: window) }
        action(map, app, "shortcuts", keys: ["<Control>question"]) { [unowned self] in
            ShortcutsWindow.show(over: window)
        }
        action(UnsafeMutableRawPointer(app), app, "quit", scope: "app", keys: ["<Control>q"]) {
            g_application_quit(cast(app))
        }

        gtk_entry_set_placeholder_text(cast(entry), "Paste or drop a URL to download it")
        Accessible.label(entry, "URL to download")
        gtk_widget_set_hexpand(entry, 1)
        on(UnsafeMutableRawPointer(entry), "activate") { [unowned self] in downloadFromEntry() }
        let bar = Make.box(
            false, spacing: 6, [entry, Make.button("Download") { [unowned self] in downloadFromEntry() }])
        Make.margins(bar, 6, 12)

        gtk_stack_add_named(cast(stack), listView(), "list")
        gtk_stack_add_named(cast(stack), emptyState(), "empty")
        gtk_widget_set_vexpand(stack, 1)
        gtk_widget_set_visible(message, 0)
        Make.margins(message, 6, 12)
        adw_toast_overlay_set_child(cast(toast.overlay), Make.box(true, spacing: 0, [bar, stack, message]))
        adw_application_window_set_content(cast(window), Make.box(true, spacing: 0, [header, toast.overlay]))
        // What a toast still offers to undo is done when the window closes.
        onCloseRequest(UnsafeMutableRawPointer(window)) { [unowned self] in toast.flush() }

        // A URL dropped anywhere on the window starts a download.
        let drop = gtk_drop_target_new(GTypes.string, GDK_ACTION_COPY)!
        onDroppedText(UnsafeMutableRawPointer(drop)) { [unowned self] text in
            guard let url = text.split(whereSeparator: \.isNewline).map(String.init).first(where: Self.isURL) else {
                return false
            }
            download(url)
            return true
        }
        gtk_widget_add_controller(window, cast(drop))

        on(UnsafeMutableRawPointer(window), "notify::is-active") { [unowned self] _ in
            if gtk_window_is_active(cast(window)) != 0 { send(AgentCalls.resetBadge()) { _ in } }
        }
        list.onCountsChanged = { [unowned self] in
            gtk_stack_set_visible_child_name(cast(stack), list.model.count == 0 ? "empty" : "list")
            gtk_widget_set_sensitive(clearButton, list.endedCount > 0 ? 1 : 0)  // nothing to clear: not clickable
        }
        list.reload()
    }

    func present() {
        gtk_window_present(cast(window))
        send(AgentCalls.resetBadge()) { _ in }
    }

    /// The primary menu (GNOME's "hamburger"): what the header bar has no room for.
    private func mainMenu() -> Widget {
        let menu = g_menu_new()!
        for (label, action) in [
            ("Preferences", "win.preferences"), ("Keyboard Shortcuts", "win.shortcuts"),
            ("About Downloads", "win.about"),
        ] {
            g_menu_append(menu, label, action)
        }
        let button = gtk_menu_button_new()!
        gtk_menu_button_set_icon_name(cast(button), "open-menu-symbolic")
        gtk_menu_button_set_menu_model(cast(button), cast(menu))
        Accessible.label(button, "Main menu")
        g_object_unref(cast(menu))
        return button
    }

    private func showPreferences() {
        guard let settings else {
            say(
                "The settings schema dev.ferry.Agent is not installed (install Ferry's package, or run desktop/install)"
            )
            return
        }
        if preferences == nil {
            let p = PreferencesWindow(parent: window, store: settings)
            p.askEffectiveFolder = { [weak self, weak p] in
                self?.send(AgentCalls.getStatus()) { status in
                    p?.showEffectiveFolder(status.downloadFolder ?? XDG.downloadDirectory)
                }
            }
            preferences = p
        }
        preferences!.present()
    }

    // MARK: Layout

    private func listView() -> Widget {
        let factory = gtk_signal_list_item_factory_new()!
        let actions = TaskActions(
            pause: { [unowned self] t in send(AgentCalls.pause(task: t.id)) { _ in } },
            resume: { [unowned self] t in send(AgentCalls.resume(task: t.id)) { _ in } },
            cancel: { [unowned self] t in cancelWithUndo(t) },
            open: { [unowned self] t in open(t) },
            showInFolder: { [unowned self] t in showInFolder(t) },
            retry: { [unowned self] t in retry(t) },
            remove: { [unowned self] t in send(AgentCalls.removeTasks(ids: [t.id])) { _ in } },
            openReply: { [unowned self] t in if let reply = t.replyFile { open(file: reply) } },
            login: { [unowned self] t in
                LoginDialog(parent: window, task: t) { [weak self] c in
                    self?.send(AgentCalls.answerChallenge(task: t.id, answer: .credential(c))) { _ in }
                }.present()
            },
            newLink: { [unowned self] t in
                NewLinkDialog(parent: window, task: t) { [weak self] url in
                    self?.send(AgentCalls.setURL(task: t.id, url: url)) { _ in }
                }.present()
            })
        on(UnsafeMutableRawPointer(factory), "setup") { item in
            let row = TaskRowView(actions)
            g_object_set_data_full(cast(row.root), "ferry-row", Unmanaged.passRetained(row).toOpaque()) {
                Unmanaged<TaskRowView>.fromOpaque($0!).release()
            }
            gtk_list_item_set_child(OpaquePointer(item), row.root)
            gtk_list_item_set_activatable(OpaquePointer(item), 1)
        }
        on(UnsafeMutableRawPointer(factory), "bind") { [unowned self] item in
            guard let child = gtk_list_item_get_child(OpaquePointer(item)),
                let data = g_object_get_data(cast(child), "ferry-row"),
                let object = gtk_list_item_get_item(OpaquePointer(item))
            else { return }
            let row = Unmanaged<TaskRowView>.fromOpaque(data).takeUnretainedValue()
            let position = PositionModel.position(of: object)
            row.position = position
            boundRows[position] = row
            row.bind(list.row(at: position))
        }
        on(UnsafeMutableRawPointer(factory), "unbind") { [unowned self] item in
            guard let child = gtk_list_item_get_child(OpaquePointer(item)),
                let data = g_object_get_data(cast(child), "ferry-row")
            else { return }
            let row = Unmanaged<TaskRowView>.fromOpaque(data).takeUnretainedValue()
            if let position = row.position, boundRows[position] === row { boundRows[position] = nil }
            row.position = nil
        }
        list.onRowChanged = { [unowned self] position in boundRows[position]?.bind(list.row(at: position)) }
        g_object_ref(list.model.object)  // the selection model takes one reference
        let selection = gtk_no_selection_new(list.model.listModel)
        let view = gtk_list_view_new(cast(selection), factory)!
        RowStyle.apply(to: view)
        gtk_list_view_set_show_separators(cast(view), 1)
        Accessible.label(view, "Downloads")
        // Enter or a double click on a finished download opens it, as in a file manager.
        onActivated(UnsafeMutableRawPointer(view)) { [unowned self] position in
            if let t = list.row(at: Int(position))?.task, t.state == .completed, t.kind == .download { open(t) }
        }
        let scroller = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(cast(scroller), view)
        return scroller
    }

    private func emptyState() -> Widget {
        let page = adw_status_page_new()!
        adw_status_page_set_icon_name(cast(page), "folder-download-symbolic")
        adw_status_page_set_title(cast(page), "No Downloads Yet")
        adw_status_page_set_description(
            cast(page),
            "Paste or drop a link above to download it. "
                + "Downloads from apps show up here too.")
        return page
    }

    // MARK: Actions

    private func send<R>(_ call: AgentCall<R>, _ done: @escaping (R) -> Void) {
        client.send(call) { [weak self] result in
            switch result {
            case .success(let value): self?.say(nil); done(value)
            case .failure(let error): self?.say(error.message)
            }
        }
    }

    /// Shows the last error under the list (nil hides it).
    private func say(_ text: String?) {
        gtk_label_set_text(cast(message), text ?? "")
        gtk_widget_set_visible(message, text == nil ? 0 : 1)
    }

    static func isURL(_ s: String) -> Bool {
        guard let u = URL(string: s.trimmingSpaces), let scheme = u.scheme?.lowercased() else { return false }
        return ["http", "https"].contains(scheme) && u.host != nil  // what the agent downloads
    }

    private func downloadFromEntry() {
        let text = String(cString: gtk_editable_get_text(cast(entry))).trimmingSpaces
        guard Self.isURL(text) else { say("Not a web address: \"\(text)\" (http or https)"); return }
        download(text)
        gtk_editable_set_text(cast(entry), "")
    }

    private func download(_ url: String, _ options: TaskOptions = TaskOptions(), then: @escaping () -> Void = {}) {
        send(AgentCalls.openUserSession) { [weak self] _ in
            self?.send(AgentCalls.createDownload(session: BusNames.cliSession, url: url, options: options)) { _ in
                then()
            }
        }
    }

    /// Cancel discards the bytes fetched, so it waits for the toast: the task pauses at once
    /// (its bytes kept) and is canceled when the toast goes; Undo resumes it.
    private func cancelWithUndo(_ t: TaskInfo) {
        let wasPaused = t.state == .paused
        send(AgentCalls.pause(task: t.id)) { _ in }
        toast.show(
            "Canceled “\(RowText.name(t))”",
            commit: { [weak self] in
                self?.send(AgentCalls.cancel(task: t.id)) { _ in }
            },
            undo: { [weak self] in
                if !wasPaused { self?.send(AgentCalls.resume(task: t.id)) { _ in } }
            })
    }

    /// A failed download again, from the start, as the user's own download; the failed row goes.
    private func retry(_ t: TaskInfo) {
        var options = TaskOptions()
        if !t.description.isEmpty { options.description = t.description }
        download(t.url, options) { [weak self] in self?.send(AgentCalls.removeTasks(ids: [t.id])) { _ in } }
    }

    /// The default app for the file, through GIO.
    private func open(_ t: TaskInfo) {
        if let file = t.file { open(file: file) }
    }

    private func open(file: String) {
        DesktopFiles.open(file) { [weak self] why in self?.say(why) }
    }

    private func showInFolder(_ t: TaskInfo) {
        if let file = t.file { DesktopFiles.showInFolder(file, client: client) }
    }
}
