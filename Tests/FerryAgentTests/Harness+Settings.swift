import FerryCore
import Foundation

/// GSettings for tests: Ferry's schema compiled once per test run, and dconf (the desktop's
/// settings service) on the test's private bus when a test wants the real thing.
extension Harness {
    /// desktop/dev.ferry.Agent.gschema.xml compiled, with the XML beside it (GSettings reads
    /// summaries and descriptions from there).
    static let ferrySchemas: String = {
        let dir = NSTemporaryDirectory() + "ferry-test-schemas-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let xml = packageRoot + "/desktop/dev.ferry.Agent.gschema.xml"
        try? FileManager.default.removeItem(atPath: dir + "/dev.ferry.Agent.gschema.xml")
        try? FileManager.default.copyItem(atPath: xml, toPath: dir + "/dev.ferry.Agent.gschema.xml")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/glib-compile-schemas")
        p.arguments = ["--strict", dir]
        try? p.run()
        p.waitUntilExit()
        return dir
    }()

    /// Makes dconf's service activatable on this test's bus: GSettings' default backend then
    /// writes through it into ~/.config/dconf/user, as on a desktop.
    /// The service gets the test's home (the bus would start it with the test runner's).
    func enableDconf() throws {
        let home = root + "/home", runtime = root + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try """
            [D-BUS Service]
            Name=ca.desrt.dconf
            Exec=/usr/bin/env HOME=\(home) XDG_CONFIG_HOME=\(home)/.config XDG_CACHE_HOME=\(home)/.cache XDG_RUNTIME_DIR=\(runtime) /usr/libexec/dconf-service

            """.write(toFile: root + "/services/ca.desrt.dconf.service", atomically: true, encoding: .utf8)
        extraEnvironment["GSETTINGS_BACKEND"] = "dconf"
        extraEnvironment["XDG_RUNTIME_DIR"] = runtime
        activatesServices = true
        // The bus sees a new service file when it rereads its folders: now, not when inotify says.
        let r = try run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                                           "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ReloadConfig"])
        guard r.status == 0 else { throw FerryError(.failed, "the test bus did not reload its configuration: \(r.stderr)") }
    }

    /// The programs it starts speak `name` ("en_US.UTF-8"), made with localedef from the
    /// `locales` package's sources into the test's folder (LOCPATH), as a desktop has its
    /// user's locale generated; nothing of the system's changes.
    func useLocale(_ name: String) throws {
        let parts = name.split(separator: ".")
        let dir = root + "/locales"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let charset = parts.count > 1 ? String(parts[1]) : "UTF-8"
        let r = try run("/usr/bin/localedef", ["-i", String(parts[0]), "-f", charset, dir + "/" + name])
        guard r.status == 0 else {
            throw FerryError(.failed, "localedef could not make \(name) (package locales): \(r.stderr)")
        }
        extraEnvironment["LOCPATH"] = dir
        extraEnvironment["LANG"] = name
    }

    /// No dconf: GLib would keep settings in memory; Ferry keeps them in ~/.config/ferry/settings.ini.
    func useMemoryBackend() { extraEnvironment["GSETTINGS_BACKEND"] = "memory" }

    /// `ferry config ARGS` that must succeed; its standard output.
    @discardableResult
    func config(_ args: String...) throws -> String {
        let r = try run(Self.ferry, ["config"] + args)
        guard r.status == 0 else { throw FerryError(.failed, "ferry config \(args.joined(separator: " ")): \(r.stderr)") }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
