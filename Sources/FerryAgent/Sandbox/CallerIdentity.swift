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
    /// When each connection was seen joining the bus (boot-clock ticks), while it is on it.
    private var joinedAt: [String: UInt64] = [:]
    /// Connections that could not be told when they joined: never trusted.
    private var unidentifiable: Set<String> = []
    /// Since when every connection that joins is seen (nil: not yet).
    private var watchingSince: UInt64?
    private let userDirs: [String: String]
    /// The joins as a thread of their own saw them, before the loop could.
    private let watcher = JoinWatcher()

    init() {
        userDirs = [
            "xdg-download": XDG.downloadDirectory, "xdg-documents": XDG.documentsDirectory,
            "xdg-desktop": XDG.desktopDirectory, "xdg-music": XDG.musicDirectory,
            "xdg-pictures": XDG.picturesDirectory, "xdg-videos": XDG.videosDirectory,
        ].mapValues(Self.resolved)
    }

    /// The bus now tells this agent of every connection that joins.
    func watching() { watchingSince = Self.bootTicks() }

    /// Starts the thread that sees connections join while the loop is busy.
    func watchJoins() { watcher.start() }

    /// A connection joined the bus: it is identified now, while the process the bus recorded
    /// for it is surely the one that opened it (that process may exit and its pid be reused
    /// while a child keeps the connection).
    /// `then` hears whether it could be told.
    func joined(_ name: String, on bus: BusConnection, then: @escaping (Bool) -> Void = { _ in }) {
        let now = Self.bootTicks()
        // the earlier sighting: the watcher's, if the loop was busy
        joinedAt[name] = min(now, watcher.joinedAt(name) ?? now)
        identify(name, on: bus) { [self] caller in
            if caller == nil, joinedAt[name] != nil { unidentifiable.insert(name) }
            then(caller != nil)
        }
    }

    /// Calls `then` with the caller behind `sender` (nil: it could not be told, so nothing is allowed).
    func identify(_ sender: String, on bus: BusConnection, then: @escaping (Caller?) -> Void) {
        if unidentifiable.contains(sender) { then(nil); return }
        if let caller = known[sender] { then(caller); return }
        guard waiting[sender] == nil else { waiting[sender]!.append(then); return }
        waiting[sender] = [then]
        let seenJoining = joinedAt[sender] != nil
        bus.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
            [.string(sender)], timeoutMilliseconds: 10_000
        ) { [self] result in
            var caller: Caller?
            // A connection not seen joining joined before the agent watched (or at the very start).
            let seen = joinedAt[sender] ?? watcher.joinedAt(sender) ?? watchingSince ?? Self.bootTicks()
            if case .success(let reply) = result,
                let credentials = BusReader.read(reply, "GetConnectionCredentials", { try $0.dict() }),
                let pid = credentials["ProcessID"]?.int64Value
            {
                let label = credentials["LinuxSecurityLabel"]?.bytesValue.map {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                caller = self.caller(pid: Int32(pid), connectionSeenAt: seen, label: label)
            }
            let left = seenJoining && joinedAt[sender] == nil
            if let caller, !left { known[sender] = caller }
            for f in waiting.removeValue(forKey: sender) ?? [] { f(caller) }
        }
    }

    func forget(_ sender: String) {
        known[sender] = nil; joinedAt[sender] = nil; unidentifiable.remove(sender)
    }

    /// The connections of the sandboxed app `app`.
    func peers(of app: String) -> [String] {
        known.compactMap { name, caller in if case .sandboxed(let a) = caller, a.id == app { name } else { nil } }
            .sorted()
    }

    /// Whether a sandboxed app is on the bus (known from its calls or its joining).
    var anyAppConnected: Bool { known.values.contains { if case .sandboxed = $0 { true } else { false } } }

    /// The connections that may hear about `app`'s tasks ("" for the user's: the host's only):
    /// its own and the host's (those known from their calls or their joining), in a stable order.
    func peers(entitledTo app: String) -> [String] {
        known.compactMap { name, caller in
            switch caller {
            case .host: name
            case .sandboxed(let a): a.id == app ? name : nil
            }
        }.sorted()
    }

    /// The process's own view of `/` decides. Its /proc folder is opened first, so every read
    /// below is about that process even if its pid is reused meanwhile (the reads then fail);
    /// a process younger than the connection did not open it (`ProcessAge`). The security label
    /// the bus recorded at connection time, when it has one, is believed before the process's.
    private func caller(pid: Int32, connectionSeenAt seen: UInt64, label: String?) -> Caller? {
        let proc = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard proc >= 0 else { return nil }
        defer { close(proc) }
        guard let stat = Self.read(at: proc, "stat"), let started = ProcessAge.startTicks(stat: stat),
            ProcessAge.mayHaveOpened(startedAt: started, connectionSeenAt: seen)
        else { return nil }
        if let info = Self.read(at: proc, "root/.flatpak-info") {
            return SandboxedApp.flatpak(info: info, userHome: Self.resolved(XDG.home), userDirs: userDirs).map(
                Caller.sandboxed)
        }
        // No /.flatpak-info: the root must still be readable, or we cannot tell (fail closed).
        let root = openat(proc, "root/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        close(root)
        if let label = label ?? Self.read(at: proc, "attr/current"),
            let snap = SandboxedApp.snap(label: label, userHome: Self.resolved(XDG.home))
        {
            return .sandboxed(snap)
        }
        return .host
    }

    /// Now, in the unit and clock of /proc/PID/stat's start time.
    static func bootTicks() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        let hz = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return UInt64(now.tv_sec) * hz + UInt64(now.tv_nsec) / (1_000_000_000 / hz)
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
