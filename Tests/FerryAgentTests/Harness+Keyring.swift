import FerryCore
import Foundation

/// A real Secret Service on the test's bus: GNOME Keyring with a login keyring of its own
/// (in the test's home), unlocked, as after a desktop login.
extension Harness {
    func startKeyring() throws {
        let runtime = root + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        extraEnvironment["XDG_RUNTIME_DIR"] = runtime
        // The password on stdin unlocks (and first creates) the login keyring, the default
        // collection. Started through Python to close every inherited descriptor: the daemon
        // keeps what it is given, and Foundation's Process sees its child end only when the
        // last copy of its own socket closes. The daemon has the test bus in its environment:
        // the harness kills it with the bus's other children.
        let script = "import subprocess, sys; p = subprocess.Popen(['gnome-keyring-daemon', '--unlock', '--components=secrets', "
            + "'--daemonize'], stdin=subprocess.PIPE, stdout=open(sys.argv[1], 'w'), stderr=subprocess.STDOUT, close_fds=True); "
            + "p.communicate(b'ferry-test'); sys.exit(p.returncode)"
        activatesServices = true
        let started = try run("/usr/bin/python3", ["-c", script, root + "/keyring.log"])
        guard started.status == 0 else { throw FerryError(.failed, "gnome-keyring-daemon (scripts/install-deps --test): \(started.stderr)") }
        let wait = try run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", "org.freedesktop.secrets"])
        guard wait.status == 0 else { throw FerryError(.failed, "no Secret Service on the test bus: \(wait.stderr)") }
        try eventually("the login keyring unlocked") { try keyringItems([:]) != nil }
    }

    /// The keyring's items with these attributes (nil: the login collection is not there yet).
    func keyringItems(_ attributes: [String: String]) throws -> [String]? {
        let dict = "{" + attributes.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ") + "}"
        let r = try run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path",
                                           "/org/freedesktop/secrets/collection/login", "--method",
                                           "org.freedesktop.Secret.Collection.SearchItems", dict])
        guard r.status == 0 else { return nil }
        return r.stdout.split(separator: "'").filter { $0.hasPrefix("/org/freedesktop/secrets/") }.map(String.init)
    }

    /// Every file under the state folder and the agent's log, as bytes: where a credential must never be.
    func storedAndLoggedBytes() throws -> [(String, Data)] {
        var found: [(String, Data)] = [(root + "/agent.log", FileManager.default.contents(atPath: root + "/agent.log") ?? Data())]
        let e = FileManager.default.enumerator(atPath: state)
        while let name = e?.nextObject() as? String {
            if let d = FileManager.default.contents(atPath: state + "/" + name) { found.append((name, d)) }
        }
        return found
    }
}
