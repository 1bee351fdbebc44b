import CFerryShim
import CGLib
import FerryCore

/// Ferry's settings (schema dev.ferry.Agent) where the desktop keeps settings: GSettings with
/// its usual backend (dconf on a desktop). Where GLib would keep them only in memory (no dconf:
/// a bare session, a server), a key file under $XDG_CONFIG_HOME/ferry/ instead, so a change
/// outlives the process. The agent, `ferry config` and the window all open it this way, so
/// they always share one store. Main thread only (GSettings is not thread-safe).
public final class SettingsStore {
    public static let schemaID = "dev.ferry.Agent"
    /// The GSettings object, for widgets bound to a key (g_settings_bind).
    public let settings: UnsafeMutablePointer<GSettings>
    private let schema: OpaquePointer
    /// Where a key file backend keeps the settings (nil: GLib's own backend).
    public let keyFile: String?
    private var onChange: [(String) -> Void] = []

    /// Throws when the schema is not installed (a build run from its folder): the agent then
    /// keeps its defaults and flags.
    public init() throws {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, Self.schemaID, 1)
        else {
            throw FerryError(
                .failed,
                "the settings schema \(Self.schemaID) is not installed "
                    + "(install Ferry's package, or run desktop/install)")
        }
        self.schema = schema
        var backend = g_settings_backend_get_default()
        if let b = backend,
            String(cString: g_type_name_from_instance(UnsafeMutablePointer<GTypeInstance>(OpaquePointer(b))))
                == "GMemorySettingsBackend"
        {
            let folder = XDG.configHome + "/ferry"
            g_mkdir_with_parents(folder, 0o700)
            let file = folder + "/settings.ini"
            g_object_unref(UnsafeMutableRawPointer(b))
            backend = g_keyfile_settings_backend_new(file, "/dev/ferry/Agent/", "Agent")
            keyFile = file
        } else {
            keyFile = nil
        }
        settings = g_settings_new_full(schema, backend, nil)!
        if let backend { g_object_unref(UnsafeMutableRawPointer(backend)) }
        GSignal.connect(UnsafeMutableRawPointer(settings), "changed") { [weak self] (key: UnsafeMutableRawPointer?) in
            guard let self, let key else { return }
            let name = String(cString: key.assumingMemoryBound(to: CChar.self))
            for f in onChange { f(name) }
        }
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(settings))
        g_settings_schema_unref(schema)
    }

    /// Calls `f` with the key's name after each change (made here, by another process, or by
    /// `gsettings`), on the main loop.
    public func observe(_ f: @escaping (String) -> Void) {
        // GSettings reports only keys once read
        if onChange.isEmpty { _ = g_settings_get_int(settings, Setting.maxTransfers.rawValue) }
        onChange.append(f)
    }

    /// The keys, in alphabetical order.
    public var keys: [String] {
        guard let list = g_settings_schema_list_keys(schema) else { return [] }
        defer { g_strfreev(list) }
        var names: [String] = []
        var i = 0
        while let p = list[i] { names.append(String(cString: p)); i += 1 }
        return names.sorted()
    }

    public func has(_ key: String) -> Bool { g_settings_schema_has_key(schema, key) != 0 }

    // MARK: Typed reads (the agent's)

    public func bool(_ key: String) -> Bool { g_settings_get_boolean(settings, key) != 0 }
    public func int(_ key: String) -> Int64 {
        guard let v = g_settings_get_value(settings, key) else { return 0 }
        defer { g_variant_unref(v) }
        switch String(cString: g_variant_get_type_string(v)) {
        case "i": return Int64(g_variant_get_int32(v))
        case "u": return Int64(g_variant_get_uint32(v))
        case "x": return Int64(g_variant_get_int64(v))
        default: return 0
        }
    }
    public func string(_ key: String) -> String {
        guard let p = g_settings_get_string(settings, key) else { return "" }
        defer { g_free(p) }
        return String(cString: p)
    }

    // MARK: As text (`ferry config`)

    public struct KeyInfo: Sendable {
        public var key, value, defaultValue, summary, description: String
        /// GVariant's type: "b", "i", "u", "x" or "s".
        public var type: String
        /// "1 to 1000", "true or false", "text"
        public var allowed: String
        /// The user set it (it is not the default).
        public var isSet: Bool
    }

    public func info(_ key: String) throws -> KeyInfo {
        let k = try schemaKey(key)
        defer { g_settings_schema_key_unref(k) }
        func text(_ v: OpaquePointer?) -> String {
            guard let v else { return "" }
            defer { g_variant_unref(v) }
            if String(cString: g_variant_get_type_string(v)) == "s", let s = g_variant_get_string(v, nil) {
                return String(cString: s)
            }
            let p = g_variant_print(v, 0)!
            defer { g_free(p) }
            return String(cString: p)
        }
        let user = g_settings_get_user_value(settings, key)
        if let user { g_variant_unref(user) }
        let type = String(cString: g_variant_type_peek_string(g_settings_schema_key_get_value_type(k)))
        return KeyInfo(
            key: key, value: text(g_settings_get_value(settings, key)),
            defaultValue: text(g_settings_schema_key_get_default_value(k)),
            summary: g_settings_schema_key_get_summary(k).map { String(cString: $0) } ?? "",
            description: g_settings_schema_key_get_description(k).map { String(cString: $0) } ?? "",
            type: type, allowed: Self.allowed(k), isSet: user != nil)
    }

    /// Sets a key from text, checked against the schema: a refused value names the key, the
    /// value and what is allowed. Integer keys take sizes ("500K") too.
    public func set(_ key: String, _ text: String) throws {
        let k = try schemaKey(key)
        defer { g_settings_schema_key_unref(k) }
        let type = String(cString: g_variant_type_peek_string(g_settings_schema_key_get_value_type(k)))
        let refused = FerryError(.invalidArgument, "\(key) \(text): must be \(Self.allowed(k))")
        let value: OpaquePointer?
        switch type {
        case "s": value = g_variant_new_string(text)
        case "b":
            switch text.lowercased() {
            case "true", "yes", "on", "1": value = g_variant_new_boolean(1)
            case "false", "no", "off", "0": value = g_variant_new_boolean(0)
            default: throw refused
            }
        case "i", "u", "x":
            guard let n = SizeText.bytes(text) else { throw refused }
            switch type {
            case "i": guard n <= Int64(Int32.max) else { throw refused }; value = g_variant_new_int32(Int32(n))
            case "u": guard n <= Int64(UInt32.max) else { throw refused }; value = g_variant_new_uint32(UInt32(n))
            default: value = g_variant_new_int64(gint64(n))
            }
        default: throw FerryError(.failed, "\(key) has a type (\(type)) ferry config cannot set")
        }
        guard let value else { throw refused }
        g_variant_ref_sink(value)
        defer { g_variant_unref(value) }
        guard g_settings_schema_key_range_check(k, value) != 0 else { throw refused }
        if key == Setting.downloadFolder.rawValue, !text.isEmpty, !text.hasPrefix("/") {
            throw FerryError(
                .invalidArgument, "\(key) \(text): must be an absolute path, or empty for the XDG download folder")
        }
        // The same rule as the agent's when it saves there: the folder, or its parent (the
        // folder is made at first use); nothing deeper, which would mean a drive not there.
        if key == Setting.downloadFolder.rawValue, !text.isEmpty {
            func isFolder(_ p: String) -> Bool { g_file_test(p, G_FILE_TEST_IS_DIR) != 0 }
            if g_file_test(text, G_FILE_TEST_EXISTS) != 0 {
                guard isFolder(text) else { throw FerryError(.invalidArgument, "\(key) \(text): not a folder") }
            } else if !isFolder(PathName.folder(of: text)) {
                throw FerryError(
                    .invalidArgument, "\(key) \(text): neither it nor the folder it would be made in exists")
            }
        }
        guard g_settings_set_value(settings, key, value) != 0 else {
            throw FerryError(.failed, "\(key) cannot be changed here (the settings are read-only)")
        }
        g_settings_sync()
    }

    public func reset(_ key: String) throws {
        g_settings_schema_key_unref(try schemaKey(key))
        g_settings_reset(settings, key)
        g_settings_sync()
    }

    private func schemaKey(_ key: String) throws -> OpaquePointer {
        guard has(key), let k = g_settings_schema_get_key(schema, key) else {
            throw FerryError(
                .invalidArgument, "no setting named '\(key)' (the settings: \(keys.joined(separator: ", ")))")
        }
        return k
    }

    private static func allowed(_ k: OpaquePointer) -> String {
        let type = String(cString: g_variant_type_peek_string(g_settings_schema_key_get_value_type(k)))
        switch type {
        case "b": return "true or false"
        case "s": return "text"
        default: break
        }
        guard let range = g_settings_schema_key_get_range(k) else { return "a number" }
        defer { g_variant_unref(range) }
        // ("range", <(min, max)>)
        let kind = g_variant_get_child_value(range, 0)!, boxed = g_variant_get_child_value(range, 1)!
        let detail = g_variant_get_variant(boxed)!
        defer { g_variant_unref(kind); g_variant_unref(boxed); g_variant_unref(detail) }
        guard String(cString: g_variant_get_string(kind, nil)) == "range", g_variant_n_children(detail) == 2 else {
            return "a whole number"
        }
        func bound(_ i: Int) -> String {
            let v = g_variant_get_child_value(detail, gsize(i))!
            defer { g_variant_unref(v) }
            let p = g_variant_print(v, 0)!
            defer { g_free(p) }
            return String(cString: p)
        }
        return "a whole number from \(bound(0)) to \(bound(1))" + (type == "x" ? " (or a size such as 500K)" : "")
    }
}
