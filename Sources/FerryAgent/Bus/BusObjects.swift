import CFerryShim
import CGLib
import CSystemd
import FerryBus
import FerrySDBus
import FerryCore

/// The objects the agent exports and how a method call to them is routed: dev.ferry.Agent1's
/// methods (their argument types checked against the interface XML compiled in from
/// desktop/dev.ferry.Agent1.xml), its `Version` property, the LauncherEntry's `Query`, and
/// introspection of both and of the paths above them. org.freedesktop.DBus.Peer on any path.
struct BusObjects {
    enum Route {
        /// A dev.ferry.Agent1 method, its arguments of the types the XML gives.
        case agentMethod(String)
        case answer([Value])
        /// A reply of one variant (Properties.Get).
        case property(Value)
        case refuse(name: String, message: String)
    }

    /// Interface → method → the types of its arguments, for each path: what the XML says each
    /// object answers, the standard interfaces included. A call of another signature is refused.
    private let signatures: [String: [String: [String: String]]]
    private let agentXML: String
    private let launcherXML: String

    private static let properties = "org.freedesktop.DBus.Properties"
    private static let introspectable = "org.freedesktop.DBus.Introspectable"
    private static let peer = "org.freedesktop.DBus.Peer"
    /// /etc/machine-id, as Peer.GetMachineId gives it.
    private static let machineID: String = {
        var id = sd_id128_t()
        guard sd_id128_get_machine(&id) >= 0 else { return "" }
        let hex = Array("0123456789abcdef")
        return withUnsafeBytes(of: id.bytes) { String($0.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }) }
    }()
    private static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg type="s" name="interface_name" direction="in"/>
              <arg type="s" name="property_name" direction="in"/>
              <arg type="v" name="value" direction="out"/>
            </method>
            <method name="GetAll">
              <arg type="s" name="interface_name" direction="in"/>
              <arg type="a{sv}" name="properties" direction="out"/>
            </method>
            <method name="Set">
              <arg type="s" name="interface_name" direction="in"/>
              <arg type="s" name="property_name" direction="in"/>
              <arg type="v" name="value" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg type="s" name="interface_name"/>
              <arg type="a{sv}" name="changed_properties"/>
              <arg type="as" name="invalidated_properties"/>
            </signal>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg type="s" name="xml_data" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId"><arg type="s" name="machine_uuid" direction="out"/></method>
          </interface>

        """
    private static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """
    /// The paths above the objects, and the names below each.
    private static let ancestors: [String: [String]] = {
        var out: [String: Set<String>] = [:]
        for path in [BusNames.path, LauncherEntry.path] {
            var parts = path.split(separator: "/").map(String.init)
            while let last = parts.popLast() {
                out["/" + parts.joined(separator: "/"), default: []].insert(last)
            }
        }
        return out.mapValues { $0.sorted() }
    }()

    init() throws {
        let agent = try Self.interfaces(
            xml: Self.standardNode + String(cString: ferry_agent_interface_xml()), named: BusNames.interface)
        let launcher = try Self.interfaces(xml: Self.standardNode + LauncherEntry.xml, named: LauncherEntry.interface)
        agentXML = Self.doctype + "<node>\n" + Self.standardInterfaces + agent.xml + "</node>\n"
        launcherXML = Self.doctype + "<node>\n" + Self.standardInterfaces + launcher.xml + "</node>\n"
        signatures = [BusNames.path: agent.signatures, LauncherEntry.path: launcher.signatures]
    }

    /// The standard interfaces as a node of their own, read with each object's XML.
    private static let standardNode = "<node>\n" + standardInterfaces + "</node>\n"

    /// The interface `name` of `xml` written out for introspection, and the argument types of
    /// every method of every interface in `xml` (each node's XML may hold several).
    private static func interfaces(
        xml: String, named name: String
    ) throws -> (xml: String, signatures: [String: [String: String]]) {
        var signatures: [String: [String: String]] = [:]
        var own = ""
        for part in xml.components(separatedBy: "</node>") where part.contains("<interface") {
            let node = part + "</node>"
            var error: UnsafeMutablePointer<GError>?
            guard let info = g_dbus_node_info_new_for_xml(node, &error) else {
                let message = error.map { String(cString: $0.pointee.message) } ?? "unreadable"
                g_clear_error(&error)
                throw FerryError(.failed, "the compiled-in interface XML does not parse: \(message)")
            }
            defer { g_dbus_node_info_unref(info) }
            var i = info.pointee.interfaces
            while let interface = i?.pointee {
                let interfaceName = String(cString: interface.pointee.name)
                var m = interface.pointee.methods
                while let method = m?.pointee {
                    var types = ""
                    var a = method.pointee.in_args
                    while let arg = a?.pointee { types += String(cString: arg.pointee.signature); a = a! + 1 }
                    signatures[interfaceName, default: [:]][String(cString: method.pointee.name)] = types
                    m = m! + 1
                }
                if interfaceName == name {
                    let text = g_string_new("")!
                    g_dbus_interface_info_generate_xml(interface, 2, text)
                    own = String(cString: text.pointee.str)
                    g_string_free(text, 1)
                }
                i = i! + 1
            }
        }
        guard !own.isEmpty else { throw FerryError(.failed, "the compiled-in interface XML has no interface \(name)") }
        return (own, signatures)
    }

    func route(_ m: BusMessage, launcherProperties: () -> [Value]) -> Route {
        let path = m.path ?? "", member = m.member ?? ""
        // Peer is answered on any path (BusConnection takes it from sd-bus, which ignores arguments).
        if m.interface == Self.peer {
            guard member == "Ping" || member == "GetMachineId" else { return Self.unknownMethod(member, Self.peer) }
            guard m.signature.isEmpty else {
                return .refuse(
                    name: "org.freedesktop.DBus.Error.InvalidArgs",
                    message: "Type of message, “(\(m.signature))”, does not match expected type “()”")
            }
            return .answer(member == "Ping" ? [] : [.string(Self.machineID)])
        }
        guard let served = signatures[path] else {
            if m.interface == Self.introspectable && member == "Introspect", let children = Self.ancestors[path] {
                return .answer([
                    .string(
                        Self.doctype + "<node>\n" + children.map { "  <node name=\"\($0)\"/>\n" }.joined() + "</node>\n"
                    )
                ])
            }
            return .refuse(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object path “\(path)”")
        }
        // Without an interface, the member of that name in the object's own interface (D-Bus allows it).
        let own = path == BusNames.path ? BusNames.interface : LauncherEntry.interface
        let interface =
            m.interface ?? (served[own]?[member] != nil ? own : served.first { $0.value[member] != nil }?.key)
        guard let interface, let expected = served[interface]?[member] else {
            return Self.unknownMethod(member, m.interface)
        }
        guard m.signature == expected else {
            return .refuse(
                name: "org.freedesktop.DBus.Error.InvalidArgs",
                message: "Type of message, “(\(m.signature))”, does not match expected type “(\(expected))”")
        }
        switch interface {
        case Self.introspectable: return .answer([.string(path == BusNames.path ? agentXML : launcherXML)])
        case Self.properties: return property(member, m.values(), own: own)
        case BusNames.interface: return .agentMethod(member)
        case LauncherEntry.interface: return .answer(launcherProperties())
        default: return Self.unknownMethod(member, interface)
        }
    }

    /// The Version property of dev.ferry.Agent1; the LauncherEntry has no properties.
    private func property(_ member: String, _ args: [Value], own: String) -> Route {
        // Get and Set name the interface and the property; GetAll the interface (types checked before).
        let interface = BusReader.read(args, member, { try $0.string() })
        let name = BusReader.read(
            args, member,
            { r in
                _ = try r.string(); return try r.string()
            })
        let version = Value.string(FerryRelease.version)
        switch member {
        case "Get" where own == BusNames.interface && interface == own && name == "Version": return .property(version)
        case "GetAll" where own == BusNames.interface && interface == own: return .answer([.dict(["Version": version])])
        case "GetAll": return .answer([.dict([:])])
        case "Set" where own == BusNames.interface && interface == own && name == "Version":
            return .refuse(
                name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property “Version” is not writable")
        case "Get", "Set":
            return .refuse(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "No such property “\(name ?? "")”")
        default: return Self.unknownMethod(member, Self.properties)
        }
    }

    private static func unknownMethod(_ member: String, _ interface: String?) -> Route {
        .refuse(
            name: "org.freedesktop.DBus.Error.UnknownMethod",
            message: "No such method “\(member)”" + (interface.map { " on interface “\($0)”" } ?? ""))
    }
}
