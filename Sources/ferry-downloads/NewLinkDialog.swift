import CGLib
import CGtk
import FerryBus
import FerryCore

/// Asks for a download's new link (a fresh signed link for one that expired): a small modal
/// window over the Downloads window, the old link shown to replace.
final class NewLinkDialog {
    private var window: Widget!
    private let link = gtk_entry_new()!

    /// `answer` gets the link when the user presses Use Link.
    init(parent: Widget, task: TaskInfo, answer: @escaping (String) -> Void) {
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
        window = Make.dialog(
            "New Link", over: parent, width: 460, [why, Make.label("Link"), link], buttons: [cancel, use])
        // The dialog lives as long as its window (closed, or destroyed after an answer).
        let me = Unmanaged.passRetained(self)
        on(UnsafeMutableRawPointer(window), "destroy") { me.release() }
    }

    func present() { gtk_window_present(cast(window)) }
}
