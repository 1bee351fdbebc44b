/// Who is calling: the user's own programs (the host), or an app in a sandbox. The agent learns it
/// from the caller's bus connection (its process and that process's root), never from arguments.
public enum Caller: Sendable, Equatable {
    case host
    case sandboxed(SandboxedApp)
}

/// A sandboxed app as the agent sees it: its id and the folders it may write to.
public struct SandboxedApp: Sendable, Equatable {
    public enum Kind: String, Sendable { case flatpak, snap }
    public var id: String
    public var kind: Kind
    /// Its own folder on the host (`~/.var/app/ID`, `~/snap/NAME`): always writable to it.
    public var home: String
    /// Host folders its sandbox lets it write (its home first).
    public var writable: [String]
    /// Folders no grant reaches, as Flatpak hides them from every app: the other apps' data
    /// (`~/.var/app`) and Flatpak's own (`~/.local/share/flatpak`); its own home stays its.
    public var hidden: [String] = []
    /// Whether its sandbox has the network (`[Context] shared=network`; a Snap's `network` plug
    /// is connected automatically and cannot be read without snapd, so a Snap has it).
    public var network = true

    public init(id: String, kind: Kind, home: String, writable: [String], hidden: [String] = [], network: Bool = true) {
        self.id = id; self.kind = kind; self.home = home; self.writable = writable; self.hidden = hidden;
        self.network = network
    }

    /// May the app write (or, for uploads, read) `path` (absolute, symlinks already resolved)?
    public func mayWrite(_ path: String) -> Bool {
        // Bytes, not Characters: Unicode-equivalent names are different files on disk.
        func inside(_ folder: String) -> Bool {
            path.utf8.elementsEqual(folder.utf8)
                || path.utf8.starts(with: (folder.hasSuffix("/") ? folder : folder + "/").utf8)
        }
        if inside(home) { return true }
        if hidden.contains(where: inside) { return false }
        return writable.contains(where: inside)
    }

    /// An app from its `.flatpak-info` (the keyfile Flatpak puts at `/.flatpak-info` in every
    /// sandbox): `[Application] name=` and the writable `[Context] filesystems=` entries
    /// (`home`, `host`, `xdg-download[/sub]` and other `xdg-*`, `~/path`, `/path`; `:ro` and
    /// `!` entries give nothing). `userDirs` maps `xdg-download` etc. to host folders.
    public static func flatpak(info: String, userHome: String, userDirs: [String: String]) -> SandboxedApp? {
        var section = "", name: String?, filesystems: [String] = [], shared: [String] = []
        for raw in info.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingSpaces
            if line.hasPrefix("[") { section = line; continue }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingSpaces, value = line[line.index(after: eq)...].trimmingSpaces
            if section == "[Application]" && key == "name" { name = value }
            if section == "[Context]" && key == "filesystems" {
                filesystems = value.split(separator: ";").map(String.init)
            }
            if section == "[Context]" && key == "shared" { shared = value.split(separator: ";").map(String.init) }
        }
        guard let id = name, !id.isEmpty, !id.contains("/"), id != ".", id != ".." else { return nil }
        let home = userHome + "/.var/app/" + id
        var writable = [home]
        for entry in filesystems where !entry.hasPrefix("!") {
            var spec = entry
            if let colon = spec.lastIndex(of: ":") {
                let mode = spec[spec.index(after: colon)...]
                if mode == "ro" { continue }
                spec = String(spec[..<colon])
            }
            if let folder = folder(spec, userHome: userHome, userDirs: userDirs) { writable.append(folder) }
        }
        return SandboxedApp(
            id: id, kind: .flatpak, home: home, writable: writable,
            hidden: [userHome + "/.var/app", userHome + "/.local/share/flatpak"], network: shared.contains("network"))
    }

    private static func folder(_ spec: String, userHome: String, userDirs: [String: String]) -> String? {
        let parts = spec.split(separator: "/", maxSplits: 1).map(String.init)
        let sub = parts.count > 1 ? "/" + parts[1] : ""
        switch parts.first ?? "" {
        case "host", "host-os", "host-etc": return spec == "host" ? "/" : nil
        case "home": return userHome + sub
        case "~": return userHome + sub
        case let d where d.hasPrefix("xdg-"): return userDirs[d].map { $0 + sub }
        default: return spec.hasPrefix("/") ? spec : nil
        }
    }

    /// A Snap from its AppArmor label (`snap.NAME.APP (enforce)`): writes only to `~/snap/NAME`.
    public static func snap(label: String, userHome: String) -> SandboxedApp? {
        guard label.hasPrefix("snap.") else { return nil }
        let name = label.dropFirst(5).prefix { $0 != "." && $0 != " " }
        guard !name.isEmpty else { return nil }
        let home = userHome + "/snap/" + name
        return SandboxedApp(id: String(name), kind: .snap, home: home, writable: [home], hidden: [userHome + "/snap"])
    }
}
