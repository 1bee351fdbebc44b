import CGLib
import CGtk
import FerryBus
import FerryCore

/// What the buttons of a row do (the window carries them out).
struct TaskActions {
    var pause: (TaskInfo) -> Void
    var resume: (TaskInfo) -> Void
    var cancel: (TaskInfo) -> Void
    var open: (TaskInfo) -> Void
    var showInFolder: (TaskInfo) -> Void
    var retry: (TaskInfo) -> Void
    var remove: (TaskInfo) -> Void
    var openReply: (TaskInfo) -> Void
    var login: (TaskInfo) -> Void
    var newLink: (TaskInfo) -> Void
}

/// One row of the list: made once per visible slot ("setup"), filled with a task each time
/// GTK shows it ("bind"). Buttons are flat icons whose tooltip and accessible name (what
/// screen readers say) name the action, in the HIG's header capitalization.
final class TaskRowView {
    let root: Widget
    private let header = Make.label(classes: ["heading"])
    private let name = Make.label(classes: ["heading"])
    private let detail = Make.label(classes: ["dim-label"])
    private let progress = gtk_progress_bar_new()!
    private var buttons: [(widget: Widget, shown: (TaskInfo) -> Bool)] = []
    private var task: TaskInfo?
    /// The task the row showed last (its buttons' focus is kept across a rebind of the same task).
    private var shownID: Int64?
    /// The list position it shows while bound (the window updates it there in place).
    var position: Int?

    init(_ actions: TaskActions) {
        gtk_label_set_ellipsize(cast(name), PANGO_ELLIPSIZE_MIDDLE)
        gtk_label_set_ellipsize(cast(detail), PANGO_ELLIPSIZE_END)
        gtk_widget_set_margin_top(header, 12)
        gtk_widget_set_margin_start(header, 12)  // in line with the rows' text
        let text = Make.box(true, spacing: 4, [name, progress, detail])
        gtk_widget_set_hexpand(text, 1)
        gtk_widget_set_valign(text, GTK_ALIGN_CENTER)
        let row = Make.box(false, spacing: 6, [text])
        Make.margins(row, 6, 12)
        gtk_widget_add_css_class(row, "ferry-row-body")  // the focus ring's (RowStyle), not the heading's
        root = Make.box(true, spacing: 0, [header, row])

        // One way forward a state: a queued or running task can be paused; a paused one resumed;
        // a waiting one tried (or started) now, which is what Resume does to it.
        let active: (TaskInfo) -> Bool = { !$0.state.isFinal }
        add(row, "media-playback-pause-symbolic", "Pause", actions.pause) {
            $0.state == .queued || $0.state == .running
        }
        add(row, "media-playback-start-symbolic", "Resume", actions.resume) { $0.state == .paused }
        add(row, "view-refresh-symbolic", "Retry Now", actions.resume) {
            $0.state == .waiting && $0.reason != .credentials && $0.reason != .scheduled
        }
        add(row, "media-playback-start-symbolic", "Start Now", actions.resume) {
            $0.state == .waiting && $0.reason == .scheduled
        }
        // A proxy (or server) waits for a user and password the user gives here.
        add(row, "dialog-password-symbolic", "Log In…", actions.login) {
            $0.state == .waiting && $0.reason == .credentials
        }
        add(row, "process-stop-symbolic", "Cancel", actions.cancel, active)
        // The file itself (Adwaita draws document-open as a folder: beside Show in Folder the two looked alike).
        add(row, "text-x-generic-symbolic", "Open", actions.open) { $0.state == .completed && $0.kind == .download }
        add(row, "folder-symbolic", "Show in Folder", actions.showInFolder) {
            $0.state == .completed && $0.kind == .download
        }
        // An upload's reply (the server's answer body), the user's own: an app's is the app's to read.
        add(row, "text-x-generic-symbolic", "Open Reply", actions.openReply) {
            $0.state == .completed && $0.kind == .upload && !($0.replyFile ?? "").isEmpty && $0.app.isEmpty
        }
        add(row, "view-refresh-symbolic", "Retry", actions.retry) { $0.state == .failed && $0.kind == .download }
        // A signed link that expired: a fresh one continues the bytes (SetURL).
        add(row, "insert-link-symbolic", "New Link…", actions.newLink) {
            ($0.state == .failed || $0.state == .paused) && $0.kind == .download
        }
        add(row, "edit-clear-symbolic", "Remove from List", actions.remove) { $0.state.isFinal }
    }

    private func add(
        _ row: Widget, _ icon: String, _ title: String, _ action: @escaping (TaskInfo) -> Void,
        _ shown: @escaping (TaskInfo) -> Bool
    ) {
        let b = Make.iconButton(icon, title) { [unowned self] in if let task { action(task) } }
        gtk_widget_set_valign(b, GTK_ALIGN_CENTER)
        gtk_box_append(cast(row), b)
        buttons.append((b, shown))
    }

    /// Shows a row, or a placeholder while its page is on its way.
    func bind(_ row: TaskList.Row?) {
        let before = shownID
        task = row?.task
        gtk_widget_set_visible(header, row?.header == nil ? 0 : 1)
        gtk_label_set_text(cast(header), row?.header ?? "")
        guard let t = row?.task else {
            shownID = nil
            gtk_label_set_text(cast(name), "Loading…")
            gtk_label_set_text(cast(detail), "")
            gtk_widget_set_visible(progress, 0)
            for b in buttons { gtk_widget_set_visible(b.widget, 0) }
            return
        }
        let sameTask = before == t.id
        shownID = t.id
        let title = RowText.name(t)
        gtk_label_set_text(cast(name), title)
        // A bar where there is progress to show: a fraction when the size is known, a pulse that
        // moves with each new figure while it runs; none for a task that is not moving and has
        // no size (a still pulse reads as a hang).
        let known = (t.expected ?? 0) > 0
        let shown = !t.state.isFinal && (known || t.state == .running)
        gtk_widget_set_visible(progress, shown ? 1 : 0)
        if shown {
            if let e = t.expected, known {
                gtk_progress_bar_set_fraction(cast(progress), min(1, Double(t.received) / Double(e)))
            } else {
                gtk_progress_bar_pulse(cast(progress))
            }
            Accessible.label(progress, "Progress of " + title)
        }
        let words = t.state.isFinal ? RowText.ended(t) : RowText.active(t, speed: row?.speed)
        gtk_label_set_text(cast(detail), words)
        // The row itself is named (the list item a screen reader lands on): the file and its
        // state, without the figures that change while it runs (a name change is read aloud).
        if let item = gtk_widget_get_parent(root) { Accessible.label(item, title + ", " + RowText.state(t)) }
        let focused = sameTask ? buttons.firstIndex { gtk_widget_has_focus($0.widget) != 0 } : nil
        for b in buttons { gtk_widget_set_visible(b.widget, b.shown(t) ? 1 : 0) }
        // A toggle (Pause, then Resume) replaces the focused button: focus goes to the one that
        // takes its place, as GNOME apps keep it, not to the row.
        if let focused, !buttons[focused].shown(t), let next = buttons.first(where: { $0.shown(t) }) {
            gtk_widget_grab_focus(next.widget)
        }
    }
}

/// Accessible names where no visible label gives one.
enum Accessible {
    static func label(_ widget: Widget, _ text: String) { set(GTK_ACCESSIBLE_PROPERTY_LABEL, widget, text) }

    private static func set(_ property: GtkAccessibleProperty, _ widget: Widget, _ text: String) {
        var value = GValue()
        g_value_init(&value, GTypes.string)
        g_value_set_string(&value, text)
        var property = property
        gtk_accessible_update_property_value(cast(widget), 1, &property, &value)
        g_value_unset(&value)
    }
}
