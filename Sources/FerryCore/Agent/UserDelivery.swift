/// What the user is told, apart from the apps: popups, the badge and the docks' progress, the
/// live views' figures. Effects only; the core decides when.
struct UserDelivery: Sendable, Equatable {
    /// Downloads completed since the user last looked (stored; docks show it).
    var badge = 0
    /// Tasks the user was told wait for disk space (one popup each, not one per recheck).
    var spaceWarned: Set<Int64> = []

    /// A task's event as the user sees it (when its session shows popups).
    /// `appSession`: the task is a sandboxed app's, in that session.
    mutating func taskEvent(
        _ event: SessionEvent, name: @autoclosure () -> String, appSession: String? = nil,
        now: Int64
    ) -> [AgentEffect] {
        switch event {
        case .finished(let file, _):
            return [.popup(.completed(file: file, appSession: appSession))] + setBadge(badge + 1, now: now)
        case .completed(let error?, let errorName, _) where errorName != "Canceled":
            return [.popup(.failed(name: name(), reason: error))]
        default:
            return []
        }
    }

    /// Whether telling the user of `event` takes more than the event (the task's name, from
    /// its record): a failure's popup names the task.
    static func needsRecord(_ event: SessionEvent) -> Bool {
        if case .completed(_?, let errorName, _) = event { errorName != "Canceled" } else { false }
    }

    /// One "not enough space" popup per task until it stops waiting for space.
    mutating func noSpace(_ id: Int64, name: @autoclosure () -> String) -> [AgentEffect] {
        spaceWarned.insert(id).inserted ? [.popup(.noSpace(name: name()))] : []
    }

    mutating func resetBadge(now: Int64) -> [AgentEffect] { badge == 0 ? [] : setBadge(0, now: now) }

    /// A click on a popup: the user has looked. A sandboxed app's popup starts the app, as
    /// itself (never a host program on the app's file). `config`: the popup's session's.
    mutating func popupActivated(_ appSession: String?, config: SessionConfig?, now: Int64) -> [AgentEffect] {
        let reset = resetBadge(now: now)
        guard let session = appSession, let c = config, !c.app.isEmpty else { return reset }
        return reset + [
            .launch(session: session, .app(id: c.app, kind: SandboxedApp.Kind(rawValue: c.appKind) ?? .flatpak))
        ]
    }

    /// The badge's new value, stored; docks hear of it within 0.1 s (the launcher wake: one
    /// Update for a burst).
    private mutating func setBadge(_ value: Int, now: Int64) -> [AgentEffect] {
        badge = value
        return [.store(.badge(value)), .wake(.launcher, at: now + 100_000)]
    }

    /// TaskChanged for rows that changed in place, then TasksProgressed per owning app for the
    /// tasks whose bytes moved (`LiveChanges`); `record` gives a running task's live row.
    func report(_ changes: LiveChanges, record: (Int64) -> TaskRecord?, app: (String) -> String) -> [AgentEffect] {
        var out: [AgentEffect] = []
        for id in changes.rowsChanged.sorted() {
            if let r = record(id) { out.append(.taskChanged(id, r.state, app: app(r.session))) }
        }
        var moved: [String: [TaskProgress]] = [:]
        for id in changes.progressMoved.sorted() {
            guard let r = record(id) else { continue }
            moved[app(r.session), default: []].append(
                TaskProgress(task: id, received: r.received, expected: r.expected ?? -1))
        }
        for (app, list) in moved.sorted(by: { $0.key < $1.key }) { out.append(.tasksProgressed(list, app: app)) }
        return out
    }
}

/// What live views have not heard of yet: running tasks whose bytes moved since the last
/// TasksProgressed, whose row changed without a change of state (their response's headers
/// came), told on the same wake as their bytes, and whose start is not told yet (with when they
/// started). Kept by `RunningTasks` as its steps go.
struct LiveChanges: Sendable, Equatable {
    var progressMoved: Set<Int64> = []
    var rowsChanged: Set<Int64> = []
    var startsUntold: [Int64: Int64] = [:]

    /// How long a task runs before its start is told: a small file is done sooner, and then
    /// only its end is (a message a file less on the bus, a wake-up less for each listener).
    static let startToldAfter: Int64 = 500_000

    /// What a wake at `now` tells, and what waits: a start not yet due waits with its task's
    /// other changes (its running state is told before its bytes or its headers). A start whose
    /// task is no longer running (`isRunning`) is dropped: its new state was told.
    func due(at now: Int64, isRunning: (Int64) -> Bool) -> (told: LiveChanges, waiting: LiveChanges) {
        var told = LiveChanges(), waiting = LiveChanges()
        for (id, at) in startsUntold where isRunning(id) {
            if now - at >= Self.startToldAfter { told.rowsChanged.insert(id) } else { waiting.startsUntold[id] = at }
        }
        for id in rowsChanged {
            if waiting.startsUntold[id] == nil { told.rowsChanged.insert(id) } else { waiting.rowsChanged.insert(id) }
        }
        for id in progressMoved {
            if waiting.startsUntold[id] == nil {
                told.progressMoved.insert(id)
            } else {
                waiting.progressMoved.insert(id)
            }
        }
        return (told, waiting)
    }

    /// When the earliest start that waits is due.
    var nextStartDue: Int64? { startsUntold.values.min().map { $0 + Self.startToldAfter } }
}
