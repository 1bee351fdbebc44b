import FerryBus

/// The Unity LauncherEntry API that docks and panels (Plasma, Dash to Dock, Plank) read the
/// badge and progress from: an Update signal, a Query method (`BusObjects`), and a fresh Update
/// whenever a dock (com.canonical.Unity) appears on the bus.
enum LauncherEntry {
    static let path = "/dev/ferry/LauncherEntry"
    static let interface = "com.canonical.Unity.LauncherEntry"
    static let appURI = "application://dev.ferry.Downloads.desktop"
    static let xml = """
        <node><interface name="com.canonical.Unity.LauncherEntry">
          <method name="Query">
            <arg name="app_uri" type="s" direction="out"/>
            <arg name="properties" type="a{sv}" direction="out"/>
          </method>
          <signal name="Update"><arg name="app_uri" type="s"/><arg name="properties" type="a{sv}"/></signal>
        </interface></node>
        """

    static func properties(_ a: Agent) -> [String: Value] {
        let s = a.launcherState
        return [
            "count": .int64(Int64(s.count)), "count-visible": .bool(s.count > 0),
            "progress": .double(s.progress), "progress-visible": .bool(s.transferring),
        ]
    }

    /// The name docks own (their appearing means: send them the badge).
    static let dock = "com.canonical.Unity"

    /// Calls `then` when a dock is on the bus already (at the agent's start).
    static func dockIsThere(_ bus: BusConnection, then: @escaping () -> Void) {
        bus.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", [.string(dock)],
            timeoutMilliseconds: 25_000
        ) { result in
            if case .success(let reply) = result, BusReader.read(reply, "NameHasOwner", { try $0.bool() }) == true {
                then()
            }
        }
    }
}
