import CGLib
import CGtk
import FerryBus
import FerryCore

/// Asks for the user and password a task waits for (a proxy that answered 407): a small modal
/// window over the Downloads window. The password field hides what is typed; nothing is kept
/// here once the answer is sent.
final class LoginDialog {
    private var window: Widget!
    private let user = gtk_entry_new()!
    private let password = gtk_password_entry_new()!

    /// `answer` gets the user and password when the user presses Log In.
    init(parent: Widget, task: TaskInfo, answer: @escaping (Credential) -> Void) {
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
        window = Make.dialog(
            "Log In", over: parent, width: 380, [why, Make.label("User"), user, Make.label("Password"), password],
            buttons: [cancel, login])
        // The dialog lives as long as its window (closed, or destroyed after an answer).
        let me = Unmanaged.passRetained(self)
        on(UnsafeMutableRawPointer(window), "destroy") { me.release() }
    }

    func present() { gtk_window_present(cast(window)) }
}
