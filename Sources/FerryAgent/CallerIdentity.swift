import CGLib
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Who is behind a bus connection, found the way xdg-desktop-portal does it: the bus tells the
/// connection's process (GetConnectionCredentials, asked without blocking the loop); a process
/// whose root holds `/.flatpak-info` is that Flatpak app, one whose AppArmor label is
/// `snap.NAME.…` that Snap; anything else is the host. Arguments are never believed. Answers are
/// kept per unique bus name until it leaves the bus (a name is never reused).
final class CallerIdentity {
    private var known: [String: Caller] = [:]
    private var waiting: [String: [(Caller?) -> Void]] = [:]
    private let userDirs: [String: String]

    init() {
        userDirs = [
            "xdg-download": XDG.downloadDirectory, "xdg-documents": XDG.documentsDirectory,
            "xdg-desktop": XDG.userDirectory(G_USER_DIRECTORY_DESKTOP, fallback: "Desktop"),
            "xdg-music": XDG.userDirectory(G_USER_DIRECTORY_MUSIC, fallback: "Music"),
            "xdg-pictures": XDG.userDirectory(G_USER_DIRECTORY_PICTURES, fallback: "Pictures"),
            "xdg-videos": XDG.userDirectory(G_USER_DIRECTORY_VIDEOS, fallback: "Videos"),
        ].mapValues(Self.resolved)
    }

    /// Calls `then` with the caller behind `sender` (nil: it could not be told, so nothing is allowed).
    func identify(_ sender: String, on bus: BusConnection, then: @escaping (Caller?) -> Void) {
        if let caller = known[sender] { then(caller); return }
        guard waiting[sender] == nil else { waiting[sender]!.append(then); return }
        waiting[sender] = [then]
        bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
                 [.string(sender)], timeoutMilliseconds: 10_000) { [self] result in
            var caller: Caller?
            if case .success(let reply) = result,
               let pid = BusReader.read(reply, "GetConnectionCredentials", { try $0.dict() })?["ProcessID"]?.int64Value {
                caller = self.caller(pid: Int32(pid))
            }
            if let caller { known[sender] = caller }
            for f in waiting.removeValue(forKey: sender) ?? [] { f(caller) }
        }
    }

    func forget(_ sender: String) { known[sender] = nil }

    /// The connections that may hear about `app`'s tasks: its own and the host's (those known
    /// from their calls), in a stable order.
    func peers(entitledTo app: String) -> [String] {
        known.compactMap { name, caller in
            switch caller {
            case .host: name
            case .sandboxed(let a): a.id == app ? name : nil
            }
        }.sorted()
    }

    /// The process's own view of `/` decides. Its /proc folder is opened first, so every read
    /// below is about that process even if its pid is reused meanwhile (the reads then fail).
    private func caller(pid: Int32) -> Caller? {
        let proc = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard proc >= 0 else { return nil }
        defer { close(proc) }
        if let info = Self.read(at: proc, "root/.flatpak-info") {
            return SandboxedApp.flatpak(info: info, userHome: Self.resolved(XDG.home), userDirs: userDirs).map(Caller.sandboxed)
        }
        // No /.flatpak-info: the root must still be readable, or we cannot tell (fail closed).
        let root = openat(proc, "root/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        close(root)
        if let label = Self.read(at: proc, "attr/current"), let snap = SandboxedApp.snap(label: label, userHome: Self.resolved(XDG.home)) {
            return .sandboxed(snap)
        }
        return .host
    }

    private static func read(at dir: Int32, _ path: String) -> String? {
        let fd = openat(dir, path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A folder with its symlinks resolved (as the paths it is compared with are).
    static func resolved(_ path: String) -> String { resolvedIfPossible(path) ?? path }

    /// A path with its symlinks resolved, or nil when it cannot be (gone, unreadable): checks of
    /// what a sandboxed app may use refuse such a path instead of judging it unresolved.
    static func resolvedIfPossible(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
