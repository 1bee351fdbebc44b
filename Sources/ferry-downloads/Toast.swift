import CGLib
import CGtk

/// A short message at the bottom of the window with an Undo button (GNOME's toast): the action
/// it offers to undo is carried out only when the toast goes (after a few seconds, when the
/// next toast comes, or when the window closes), so Undo needs nothing taken back.
final class Toast {
    let widget: Widget
    private let label = Make.label()
    private var pending: (commit: () -> Void, undo: () -> Void)?
    private var timer: UInt32 = 0
    static let seconds: UInt32 = 5

    init() {
        let undo = Make.button("Undo") {}
        let box = Make.box(false, spacing: 12, [label, undo])
        gtk_widget_add_css_class(box, "osd")
        gtk_widget_add_css_class(box, "toolbar")
        Make.margins(box, 6, 12)
        widget = gtk_revealer_new()!
        gtk_revealer_set_child(cast(widget), box)
        gtk_revealer_set_transition_type(cast(widget), GTK_REVEALER_TRANSITION_TYPE_SLIDE_UP)
        gtk_widget_set_halign(widget, GTK_ALIGN_CENTER)
        gtk_widget_set_valign(widget, GTK_ALIGN_END)
        gtk_widget_set_margin_bottom(widget, 18)
        on(UnsafeMutableRawPointer(undo), "clicked") { [unowned self] in
            let p = pending
            dismiss()
            p?.undo()
        }
    }

    /// Shows `text`; `commit` runs when the toast goes without Undo.
    func show(_ text: String, commit: @escaping () -> Void, undo: @escaping () -> Void) {
        flush()
        pending = (commit, undo)
        gtk_label_set_text(cast(label), text)
        gtk_revealer_set_reveal_child(cast(widget), 1)
        timer = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, Self.seconds, { me in
            let toast = Unmanaged<Toast>.fromOpaque(me!).takeUnretainedValue()
            toast.timer = 0
            toast.flush()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Carries out what waits (the toast goes, or the window closes).
    func flush() {
        let p = pending
        dismiss()
        p?.commit()
    }

    private func dismiss() {
        pending = nil
        if timer != 0 { g_source_remove(timer); timer = 0 }
        gtk_revealer_set_reveal_child(cast(widget), 0)
    }
}
