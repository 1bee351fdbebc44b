import CGLib
import CGtk
import FerryBus
import FerryCore

/// Asks for a download's new link (a fresh signed link for one that expired): a small modal
/// window over the Downloads window, the old link shown to replace.
final class NewLinkDialog {
    private let window: Widget
    private let link = gtk_entry_new()!

    /// `answer` gets the link when the user presses Use Link.
    init(parent: Widget, task: TaskInfo, answer: @escaping (String) -> Void) {
        window = gtk_window_new()
        gtk_window_set_title(cast(window), "New Link")
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_set_modal(cast(window), 1)
        gtk_window_set_default_size(cast(window), 460, -1)
        let why = Make.label(
            "The download continues from the new link when it serves the same file; otherwise it starts over.")
        gtk_label_set_wrap(cast(why), 1)
        Accessible.label(link, "Link")
        gtk_editable_set_text(cast(link), task.url)
        let cancel = Make.button("Cancel") { [unowned self] in gtk_window_destroy(cast(window)) }
        let use = Make.button("Use Link") { [unowned self] in
            let text = String(cString: gtk_editable_get_text(cast(link)))
            guard !text.isEmpty, text != task.url else { return }
            answer(text)
            gtk_window_destroy(cast(window))
        }
        gtk_widget_add_css_class(use, "suggested-action")
        let buttons = Make.box(false, spacing: 6, [cancel, use])
        gtk_widget_set_halign(buttons, GTK_ALIGN_END)
        let content = Make.box(true, spacing: 12, [why, Make.label("Link"), link, buttons])
        Make.margins(content, 18, 18)
        gtk_window_set_child(cast(window), content)
        // The dialog lives as long as its window (closed, or destroyed after an answer).
        let me = Unmanaged.passRetained(self)
        on(UnsafeMutableRawPointer(window), "destroy") { me.release() }
    }

    func present() { gtk_window_present(cast(window)) }
}
