import CGLib

/// An interface as desktop/dev.ferry.Agent1.xml declares it, read with GLib's own parser of
/// D-Bus introspection XML (the one the agent registers its objects with): methods, signals,
/// their arguments and the `dev.ferry.Swift.*` annotations that name each argument's Swift type.
struct Interface {
    struct Argument {
        let name: String
        let signature: String
        let annotations: [String: String]
    }
    struct Member {
        let name: String
        let inputs: [Argument]
        let outputs: [Argument]
        let annotations: [String: String]
    }
    let name: String
    let methods: [Member]
    let signals: [Member]

    /// The interface named `name` in the XML text `xml`.
    init(xml: String, name wanted: String) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(xml, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unreadable"
            throw GeneratorError("the interface XML does not parse: \(message)")
        }
        defer { g_dbus_node_info_unref(node) }
        guard
            let interface = Self.each(node.pointee.interfaces).first(where: {
                String(cString: $0.pointee.name) == wanted
            })
        else {
            throw GeneratorError("the XML has no interface \(wanted)")
        }
        name = wanted
        methods = Self.each(interface.pointee.methods).map { m in
            Member(
                name: String(cString: m.pointee.name), inputs: Self.arguments(m.pointee.in_args),
                outputs: Self.arguments(m.pointee.out_args), annotations: Self.annotations(m.pointee.annotations))
        }
        signals = Self.each(interface.pointee.signals).map { s in
            Member(
                name: String(cString: s.pointee.name), inputs: Self.arguments(s.pointee.args), outputs: [],
                annotations: Self.annotations(s.pointee.annotations))
        }
    }

    /// The elements of one of GDBus's NULL-terminated arrays.
    private static func each<T>(_ list: UnsafeMutablePointer<UnsafeMutablePointer<T>?>?) -> [UnsafeMutablePointer<T>] {
        var out: [UnsafeMutablePointer<T>] = []
        var p = list
        while let item = p?.pointee { out.append(item); p = p! + 1 }
        return out
    }

    private static func arguments(_ list: UnsafeMutablePointer<UnsafeMutablePointer<GDBusArgInfo>?>?) -> [Argument] {
        each(list).map { a in
            Argument(
                name: String(cString: a.pointee.name), signature: String(cString: a.pointee.signature),
                annotations: annotations(a.pointee.annotations))
        }
    }

    private static func annotations(
        _ list: UnsafeMutablePointer<UnsafeMutablePointer<GDBusAnnotationInfo>?>?
    ) -> [String: String] {
        Dictionary(each(list).map { (String(cString: $0.pointee.key), String(cString: $0.pointee.value)) }) { a, _ in a
        }
    }
}

struct GeneratorError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
