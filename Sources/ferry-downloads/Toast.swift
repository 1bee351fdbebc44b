import CGLib
import CGtk

/// A short message at the bottom of the window with an Undo button (libadwaita's toast): the
/// action it offers to undo is carried out only when the toast goes (after a few seconds, when
/// the next toast comes, or when the window closes), so Undo needs nothing taken back.
final class Toast {
    /// The window's content goes in it; toasts show over it.
    let overlay: Widget = adw_toast_overlay_new()!
    private var current: OpaquePointer?
    private var pending: (commit: () -> Void, undo: () -> Void)?
    static let seconds: UInt32 = 5

    /// Shows `text`; `commit` runs when the toast goes without Undo.
    func show(_ text: String, commit: @escaping () -> Void, undo: @escaping () -> Void) {
        flush()
        let toast = adw_toast_new(text)!
        adw_toast_set_button_label(toast, "Undo")
        adw_toast_set_timeout(toast, Self.seconds)
        // Signals of a toast that is no longer the current one (dismissed by `flush`) do nothing.
        on(UnsafeMutableRawPointer(toast), "button-clicked") { [unowned self] in
            guard current == toast else { return }
            let p = take()
            p?.undo()
        }
        on(UnsafeMutableRawPointer(toast), "dismissed") { [unowned self] in
            guard current == toast else { return }
            let p = take()
            p?.commit()
        }
        pending = (commit, undo)
        current = toast
        g_object_ref(cast(toast))  // kept while current; the overlay takes its own
        adw_toast_overlay_add_toast(cast(overlay), toast)
    }

    /// Carries out what waits (the next toast comes, or the window closes).
    func flush() {
        guard let toast = current else { return }
        g_object_ref(cast(toast))
        let p = take()
        adw_toast_dismiss(toast)  // its "dismissed" finds it no longer current
        g_object_unref(cast(toast))
        p?.commit()
    }

    private func take() -> (commit: () -> Void, undo: () -> Void)? {
        let p = pending
        pending = nil
        if let toast = current { g_object_unref(cast(toast)) }
        current = nil
        return p
    }
}
