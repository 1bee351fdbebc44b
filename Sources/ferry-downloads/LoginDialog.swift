import CGLib
import CGtk
import FerryBus
import FerryCore

/// Asks for the user and password a task waits for (a proxy that answered 407): a small modal
/// window over the Downloads window. The password field hides what is typed; nothing is kept
/// here once the answer is sent.
final class LoginDialog {
    private let window: Widget
    private let user = gtk_entry_new()!
    private let password = gtk_password_entry_new()!

    /// `answer` gets the user and password when the user presses Log In.
    init(parent: Widget, task: TaskInfo, answer: @escaping (Credential) -> Void) {
        window = gtk_window_new()
        gtk_window_set_title(cast(window), "Log In")
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_set_modal(cast(window), 1)
        gtk_window_set_default_size(cast(window), 380, -1)
        let why = Make.label(task.error ?? "The download waits for a user name and password.")
        gtk_label_set_wrap(cast(why), 1)
        Accessible.label(user, "User")
        Accessible.label(password, "Password")
        gtk_password_entry_set_show_peek_icon(cast(password), 1)
        let cancel = Make.button("Cancel") { [unowned self] in gtk_window_destroy(cast(window)) }
        let login = Make.button("Log In") { [unowned self] in
            let name = String(cString: gtk_editable_get_text(cast(user)))
            let secret = String(cString: gtk_editable_get_text(cast(password)))
            guard !name.isEmpty else { return }
            answer(Credential(user: name, password: secret))
            gtk_editable_set_text(cast(password), "")
            gtk_window_destroy(cast(window))
        }
        gtk_widget_add_css_class(login, "suggested-action")
        let buttons = Make.box(false, spacing: 6, [cancel, login])
        gtk_widget_set_halign(buttons, GTK_ALIGN_END)
        let content = Make.box(
            true, spacing: 12, [why, Make.label("User"), user, Make.label("Password"), password, buttons])
        Make.margins(content, 18, 18)
        gtk_window_set_child(cast(window), content)
        // The dialog lives as long as its window (closed, or destroyed after an answer).
        let me = Unmanaged.passRetained(self)
        on(UnsafeMutableRawPointer(window), "destroy") { me.release() }
    }

    func present() { gtk_window_present(cast(window)) }
}
