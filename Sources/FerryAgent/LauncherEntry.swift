import CGLib
import FerryBus

/// The Unity LauncherEntry API that docks and panels (Plasma, Dash to Dock, Plank) read the
/// badge and progress from: an Update signal, a Query method, and a fresh Update whenever a
/// dock (com.canonical.Unity) appears on the bus.
enum LauncherEntry {
    static let path = "/dev/ferry/LauncherEntry"
    static let interface = "com.canonical.Unity.LauncherEntry"
    static let appURI = "application://ferry.desktop"
    static let xml = """
        <node><interface name="com.canonical.Unity.LauncherEntry">
          <method name="Query"><arg name="app_uri" type="s" direction="out"/><arg name="properties" type="a{sv}" direction="out"/></method>
          <signal name="Update"><arg name="app_uri" type="s"/><arg name="properties" type="a{sv}"/></signal>
        </interface></node>
        """

    static func properties(_ a: Agent) -> [String: Value] {
        let s = a.launcherState
        return ["count": .int64(Int64(s.count)), "count-visible": .bool(s.count > 0),
                "progress": .double(s.progress), "progress-visible": .bool(s.transferring)]
    }

    static func register(_ conn: OpaquePointer, service: BusService) {
        guard let info = g_dbus_node_info_new_for_xml(xml, nil) else { return }
        var vtable = GDBusInterfaceVTable()
        vtable.method_call = { _, _, _, _, _, _, invocation, user in
            let service = Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue()
            service.reply(invocation, "Query") { [.string(LauncherEntry.appURI), .dict(LauncherEntry.properties(service.agent))] }
        }
        let user = Unmanaged.passUnretained(service).toOpaque()
        g_dbus_connection_register_object(conn, path, g_dbus_node_info_lookup_interface(info, interface), &vtable, user, nil, nil)
        let appeared: GBusNameAppearedCallback = { _, _, _, user in
            Unmanaged<BusService>.fromOpaque(user!).takeUnretainedValue().publishLauncher()
        }
        g_bus_watch_name_on_connection(conn, "com.canonical.Unity", GBusNameWatcherFlags(rawValue: 0) /* NONE */, appeared, nil, user, nil)
    }
}
