import CGLib
import CGtk
import FerryBus

// The few helpers the window needs to speak GTK from Swift: GTK's casts are C macros, and its
// signals take C function pointers, so closures travel in a `Box`.

/// GTK's pointer casts (GTK_WINDOW(w) and friends): every GObject pointer is the same address.
@inline(__always) func cast<T, U>(_ p: U) -> T { unsafeBitCast(p, to: T.self) }

typealias Widget = UnsafeMutablePointer<GtkWidget>

private let release: GClosureNotify = { data, _ in
    if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
}

/// Connects a signal whose handler takes only the emitting object, e.g. "clicked", "activate".
func on(_ object: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping () -> Void) {
    GSignal.connect(object, signal, handler)
}

/// Connects a signal with one pointer argument, e.g. a list factory's "setup" and "bind", or
/// "notify::PROPERTY" (the argument is then the GParamSpec).
func on(_ object: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping (UnsafeMutableRawPointer) -> Void) {
    GSignal.connect(object, signal) { (arg: UnsafeMutableRawPointer?) in handler(arg!) }
}

/// A window's "close-request": `handler` runs, and the window closes.
func onCloseRequest(_ window: UnsafeMutableRawPointer, _ handler: @escaping () -> Void) {
    let c: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, user in
        Box<() -> Void>.peek(user!)(); return 0
    }
    g_signal_connect_data(
        window, "close-request", unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release, GConnectFlags(0))
}

/// A list view's "activate" (Enter, or a double click on an activatable row): the row's position.
func onActivated(_ view: UnsafeMutableRawPointer, _ handler: @escaping (UInt32) -> Void) {
    let c: @convention(c) (gpointer?, guint, gpointer?) -> Void = { _, position, user in
        Box<(UInt32) -> Void>.peek(user!)(position)
    }
    g_signal_connect_data(
        view, "activate", unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release, GConnectFlags(0))
}

/// A window or application action ("win.NAME", "app.NAME") and its keyboard shortcuts.
func action(
    _ map: UnsafeMutableRawPointer, _ app: UnsafeMutablePointer<GtkApplication>, _ name: String,
    scope: String = "win", keys: [String], _ handler: @escaping () -> Void
) {
    let a = g_simple_action_new(name, nil)!
    let c: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, user in Box<() -> Void>.peek(user!)() }
    g_signal_connect_data(
        UnsafeMutableRawPointer(a), "activate", unsafeBitCast(c, to: GCallback.self), Box.retained(handler),
        release, GConnectFlags(0))
    g_action_map_add_action(cast(map), cast(a))
    g_object_unref(cast(a))
    var accels = keys.map { strdup($0) } + [nil]
    gtk_application_set_accels_for_action(
        app, "\(scope).\(name)", accels.withUnsafeMutableBufferPointer { cast($0.baseAddress!) })
    for p in accels { free(p) }
}

/// A GtkDropTarget's "drop" with a string value; the handler says whether it took the drop.
func onDroppedText(_ target: UnsafeMutableRawPointer, _ handler: @escaping (String) -> Bool) {
    let c: @convention(c) (gpointer?, UnsafePointer<GValue>?, Double, Double, gpointer?) -> gboolean = {
        _, value, _, _, user in
        guard let value, let s = g_value_get_string(value) else { return 0 }
        return Box<(String) -> Bool>.peek(user!)(String(cString: s)) ? 1 : 0
    }
    g_signal_connect_data(
        target, "drop", unsafeBitCast(c, to: GCallback.self), Box.retained(handler), release, GConnectFlags(0))
}

/// Small constructors that keep the window's layout code readable.
enum Make {
    static func label(_ text: String = "", classes: [String] = [], xalign: Float = 0) -> Widget {
        let l = gtk_label_new(text)!
        gtk_label_set_xalign(cast(l), xalign)
        for c in classes { gtk_widget_add_css_class(l, c) }
        return l
    }

    static func box(_ vertical: Bool, spacing: Int32, _ children: [Widget] = []) -> Widget {
        let b = gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing)!
        for c in children { gtk_box_append(cast(b), c) }
        return b
    }

    /// A small modal window over `parent` (a dialog: Log In, New Link), `content` inside with
    /// the dialog's margins, and Cancel and the suggested action at its end.
    static func dialog(
        _ title: String, over parent: Widget, width: Int32, _ content: [Widget], buttons: [Widget]
    )
        -> Widget
    {
        let window = gtk_window_new()!
        gtk_window_set_title(cast(window), title)
        gtk_window_set_transient_for(cast(window), cast(parent))
        gtk_window_set_modal(cast(window), 1)
        gtk_window_set_default_size(cast(window), width, -1)
        if let last = buttons.last { gtk_widget_add_css_class(last, "suggested-action") }
        let row = box(false, spacing: 6, buttons)
        gtk_widget_set_halign(row, GTK_ALIGN_END)
        let all = box(true, spacing: 12, content + [row])
        margins(all, 18, 18)
        gtk_window_set_child(cast(window), all)
        return window
    }

    /// A button whose label is also its accessible name.
    static func button(_ title: String, _ action: @escaping () -> Void) -> Widget {
        let b = gtk_button_new_with_label(title)!
        on(UnsafeMutableRawPointer(b), "clicked", action)
        return b
    }

    /// A flat icon button, as GNOME's list rows have them: its tooltip and accessible name say
    /// what it does.
    static func iconButton(_ icon: String, _ name: String, _ action: @escaping () -> Void) -> Widget {
        let b = gtk_button_new_from_icon_name(icon)!
        gtk_widget_add_css_class(b, "flat")
        gtk_widget_set_tooltip_text(b, name)
        Accessible.label(b, name)
        on(UnsafeMutableRawPointer(b), "clicked", action)
        return b
    }

    static func margins(_ w: Widget, _ v: Int32, _ h: Int32) {
        gtk_widget_set_margin_top(w, v); gtk_widget_set_margin_bottom(w, v)
        gtk_widget_set_margin_start(w, h); gtk_widget_set_margin_end(w, h)
    }
}

/// GType's fundamental types are C macros; their registered names are not.
enum GTypes {
    static let object = g_type_from_name("GObject")
    static let string = g_type_from_name("gchararray")
}
