/// How the agent starts a session's app for its waiting events.
public enum LaunchTarget: Sendable, Equatable {
    /// The host app's own launch-command (an argv, or one desktop entry id or path).
    case command([String])
    /// A sandboxed app, started only as itself: D-Bus activation of its id when its desktop
    /// entry is DBusActivatable, else `flatpak run` (`snap run` for a Snap). Never a command
    /// the app chose: that would run on the host, outside its sandbox.
    case app(id: String, kind: SandboxedApp.Kind)

    /// For the logs.
    public var name: String {
        switch self {
        case .command(let argv): argv.first ?? "?"
        case .app(let id, let kind): "\(kind.rawValue) app \(id)"
        }
    }
}

extension SessionConfig {
    /// How the session's app is started for its events, or nil when it is not.
    public var launchTarget: LaunchTarget? {
        guard keepEvents, relaunch else { return nil }
        if !app.isEmpty { return .app(id: app, kind: SandboxedApp.Kind(rawValue: appKind) ?? .flatpak) }
        return launchCommand.isEmpty ? nil : .command(launchCommand)
    }
}
