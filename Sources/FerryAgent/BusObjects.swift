import CFerryShim
import CGLib
import FerryBus
import FerryCore

/// The objects the agent exports and how a method call to them is routed: dev.ferry.Agent1's
/// methods (their argument types checked against the interface XML compiled in from
/// desktop/dev.ferry.Agent1.xml), its `Version` property, the LauncherEntry's `Query`, and
/// introspection of both and of the paths above them. sd-bus answers org.freedesktop.DBus.Peer.
struct BusObjects {
    enum Route {
        /// A dev.ferry.Agent1 method, its arguments of the types the XML gives.
        case agentMethod(String)
        case answer([Value])
        /// A reply of one variant (Properties.Get).
        case property(Value)
        case refuse(name: String, message: String)
    }

    /// Method name → the types of its arguments, from the XML.
    private let signatures: [String: String]
    private let agentXML: String
    private let launcherXML: String

    private static let properties = "org.freedesktop.DBus.Properties"
    private static let introspectable = "org.freedesktop.DBus.Introspectable"
    private static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg type="s" name="interface_name" direction="in"/><arg type="s" name="property_name" direction="in"/><arg type="v" name="value" direction="out"/></method>
            <method name="GetAll"><arg type="s" name="interface_name" direction="in"/><arg type="a{sv}" name="properties" direction="out"/></method>
            <method name="Set"><arg type="s" name="interface_name" direction="in"/><arg type="s" name="property_name" direction="in"/><arg type="v" name="value" direction="in"/></method>
            <signal name="PropertiesChanged"><arg type="s" name="interface_name"/><arg type="a{sv}" name="changed_properties"/><arg type="as" name="invalidated_properties"/></signal>
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
        let (agent, signatures) = try Self.interface(xml: String(cString: ferry_agent_interface_xml()), named: BusNames.interface)
        self.signatures = signatures
        agentXML = Self.doctype + "<node>\n" + Self.standardInterfaces + agent + "</node>\n"
        let (launcher, _) = try Self.interface(xml: LauncherEntry.xml, named: LauncherEntry.interface)
        launcherXML = Self.doctype + "<node>\n" + Self.standardInterfaces + launcher + "</node>\n"
    }

    /// An interface of `xml` written out for introspection, and its methods' argument types.
    private static func interface(xml: String, named name: String) throws -> (String, [String: String]) {
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(xml, &error),
              let info = g_dbus_node_info_lookup_interface(node, name) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "no interface \(name)"
            g_clear_error(&error)
            throw FerryError(.failed, "the compiled-in interface XML does not parse: \(message)")
        }
        defer { g_dbus_node_info_unref(node) }
        var signatures: [String: String] = [:]
        var m = info.pointee.methods
        while let method = m?.pointee {
            var types = ""
            var a = method.pointee.in_args
            while let arg = a?.pointee { types += String(cString: arg.pointee.signature); a = a! + 1 }
            signatures[String(cString: method.pointee.name)] = types
            m = m! + 1
        }
        let text = g_string_new("")!
        g_dbus_interface_info_generate_xml(info, 2, text)
        defer { g_string_free(text, 1) }
        return (String(cString: text.pointee.str), signatures)
    }

    func route(_ m: BusMessage, launcherProperties: () -> [Value]) -> Route {
        let path = m.path ?? "", interface = m.interface, member = m.member ?? ""
        if interface == Self.introspectable && member == "Introspect" {
            switch path {
            case BusNames.path: return .answer([.string(agentXML)])
            case LauncherEntry.path: return .answer([.string(launcherXML)])
            default:
                if let children = Self.ancestors[path] {
                    return .answer([.string(Self.doctype + "<node>\n" + children.map { "  <node name=\"\($0)\"/>\n" }.joined() + "</node>\n")])
                }
            }
        }
        switch path {
        case BusNames.path:
            if interface == BusNames.interface || (interface == nil && signatures[member] != nil) {
                guard let expected = signatures[member] else { return Self.unknownMethod(member, interface) }
                guard m.signature == expected else {
                    return .refuse(name: "org.freedesktop.DBus.Error.InvalidArgs",
                                   message: "Type of message, “(\(m.signature))”, does not match expected type “(\(expected))”")
                }
                return .agentMethod(member)
            }
            if interface == Self.properties { return property(member, m.values()) }
            return Self.unknownMethod(member, interface)
        case LauncherEntry.path:
            guard interface == LauncherEntry.interface || interface == nil, member == "Query" else { return Self.unknownMethod(member, interface) }
            return .answer(launcherProperties())
        default:
            return .refuse(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object path “\(path)”")
        }
    }

    private func property(_ member: String, _ args: [Value]) -> Route {
        let interface = args.first?.stringValue, name = args.count > 1 ? args[1].stringValue : nil
        let version = Value.string(FerryRelease.version)
        switch member {
        case "Get" where interface == BusNames.interface && name == "Version": return .property(version)
        case "GetAll" where interface == BusNames.interface: return .answer([.dict(["Version": version])])
        case "GetAll": return .answer([.dict([:])])
        case "Set" where interface == BusNames.interface && name == "Version":
            return .refuse(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property “Version” is not writable")
        case "Get", "Set":
            return .refuse(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "No such property “\(name ?? "")”")
        default: return Self.unknownMethod(member, Self.properties)
        }
    }

    private static func unknownMethod(_ member: String, _ interface: String?) -> Route {
        .refuse(name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "No such method “\(member)”" + (interface.map { " on interface “\($0)”" } ?? ""))
    }
}
