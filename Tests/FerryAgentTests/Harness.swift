import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// Real parts for integration tests: a private dbus-daemon, the real ferryd and ferry binaries,
/// nginx and the fault-injecting HTTP server, all on loopback in a temporary folder.
final class Harness: @unchecked Sendable {
    let root: String
    let www: String
    let downloads: String
    let state: String
    var busAddress = ""
    private var dbus: Process?
    private(set) var agent: Process?
    private var faultServer: Process?
    var nginx: Process?
    private(set) var faultPort = 0
    var nginxPort = 0
    /// Network namespaces the agent and the servers run in (see `isolateNetwork`).
    private(set) var agentNetns: String?
    private(set) var serverNetns: String?
    /// The address the test servers are reached at from the agent.
    private(set) var serverHost = "127.0.0.1"

    /// Whether tests may make network namespaces here (root, iproute2, not refused).
    static let canMakeNetworkNamespaces: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else { return false }
        let name = "ferry-probe-\(getpid())"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        p.arguments = ["netns", "add", name]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return false }
        let d = Process()
        d.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        d.arguments = ["netns", "del", name]
        try? d.run()
        d.waitUntilExit()
        return true
    }()

    /// From now on the servers and the agent run in a new network namespace with only
    /// loopback up: no default route (an offline LAN, a lab, a sandbox). With `linked`, the
    /// agent and the servers get a namespace each, joined by a veth link that carries the
    /// agent's default route (`setLink` takes it down and up). Call before starting them.
    func isolateNetwork(linked: Bool = false) throws {
        let tag = "\(getpid() % 100_000)-\(UInt16.random(in: 0...UInt16.max))"
        let a = "ferry-a-\(tag)", s = linked ? "ferry-s-\(tag)" : a
        var steps = [["netns", "add", a], ["-n", a, "link", "set", "lo", "up"]]
        if linked {
            steps += [["netns", "add", s], ["-n", s, "link", "set", "lo", "up"],
                      ["link", "add", "fva", "netns", a, "type", "veth", "peer", "name", "fvs", "netns", s],
                      ["-n", a, "addr", "add", "10.213.0.1/30", "dev", "fva"],
                      ["-n", s, "addr", "add", "10.213.0.2/30", "dev", "fvs"],
                      ["-n", s, "link", "set", "fvs", "up"]]
        }
        agentNetns = a
        serverNetns = s
        for args in steps { try ip(args) }
        if linked {
            try setLink(up: true)
            serverHost = "10.213.0.2"
        }
    }

    /// The agent's link to the servers (and its default route) goes down or comes back.
    func setLink(up: Bool) throws {
        guard let a = agentNetns else { return }
        try ip(["-n", a, "link", "set", "fva", up ? "up" : "down"])
        if up { try ip(["-n", a, "route", "replace", "default", "via", "10.213.0.2"]) }
    }

    private func ip(_ args: [String]) throws {
        let r = try run("/usr/sbin/ip", args)
        guard r.status == 0 else { throw FerryError(.failed, "ip \(args.joined(separator: " ")): \(r.stderr)") }
    }

    /// The executable and arguments, run inside the agent's (or the servers') namespace when there is one.
    func inNamespace(_ exe: String, _ args: [String], server: Bool = false) -> (String, [String]) {
        guard let netns = server ? serverNetns : agentNetns else { return (exe, args) }
        return ("/usr/sbin/ip", ["netns", "exec", netns, exe] + args)
    }

    /// Small disks mounted inside `root` for this test.
    private var mounts: [SmallDisk] = []

    /// A tmpfs of `kilobytes` at `path` (inside root), kept until the harness ends.
    func mountSmallDisk(_ path: String, kilobytes: Int) throws -> SmallDisk {
        let disk = try SmallDisk(at: path, kilobytes: kilobytes)
        mounts.append(disk)
        return disk
    }

    static var buildDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // swift test runs <build>/FerryPackageTests.xctest
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("ferryd").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }
    static var ferryd: String { buildDirectory + "/ferryd" }
    static var ferry: String { buildDirectory + "/ferry" }
    static var browserHost: String { buildDirectory + "/ferry-browser-host" }
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    init() throws {
        var template = Array("/tmp/ferry-test-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw FerryError(.failed, "mkdtemp") }
        root = String(cString: p)
        www = root + "/www"; downloads = root + "/downloads"; state = root + "/state"
        for d in [www, downloads, root + "/home", root + "/nginx/logs", root + "/services"] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
        try startBus()
    }

    deinit {
        // The accessibility bus and its registry daemon are not our children (bus activation
        // forks twice): anything still running with this test's bus address goes too.
        if display != nil || activatesServices { killEverythingOnThisBus() }
        // Children of Foundation's Process start with signals blocked: SIGKILL is the only sure stop.
        for p in background + [agent, faultServer, nginx, notificationServer, dbus] {
            if let p, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        }
        mounts.removeAll()   // unmount before the folder goes
        for netns in Set([agentNetns, serverNetns].compactMap { $0 }) { _ = try? run("/usr/sbin/ip", ["netns", "del", netns]) }
        // FERRY_TEST_KEEP_LOGS=DIR keeps each test's agent log (for chasing a flaky failure).
        if let keep = ProcessInfo.processInfo.environment["FERRY_TEST_KEEP_LOGS"] {
            try? FileManager.default.copyItem(atPath: root + "/agent.log", toPath: keep + "/agent-\((root as NSString).lastPathComponent).log")
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env["HOME"] = root + "/home"
        env["XDG_STATE_HOME"] = root + "/home/.local/state"
        env["XDG_CONFIG_HOME"] = root + "/home/.config"
        env["XDG_DATA_HOME"] = root + "/home/.local/share"
        env["XDG_DATA_DIRS"] = root + "/nonexistent"   // no system-wide service files
        // But GSettings' schemas (the proxy's settings) and Ferry's own, compiled from desktop/.
        env["GSETTINGS_SCHEMA_DIR"] = "/usr/share/glib-2.0/schemas:" + Self.ferrySchemas
        // No graphical display unless a test starts one: `ferry view` shows text.
        env["WAYLAND_DISPLAY"] = ""
        env["DISPLAY"] = display ?? ""
        if display != nil {
            env["GTK_A11Y"] = "atspi"
            env["NO_AT_BRIDGE"] = nil
            env["XDG_DATA_DIRS"] = "/usr/share"   // GTK and the accessibility bus need their settings schemas
        }
        return env.merging(extraEnvironment) { $1 }
    }
    /// Added to every process this harness starts (a test's GSettings backend, say).
    var extraEnvironment: [String: String] = [:]
    /// The bus may have started services (dconf) that outlive it unless killed.
    var activatesServices = false

    private func startBus() throws {
        let config = root + "/bus.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(root)</listen>
          <servicedir>\(root)/services</servicedir>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        p.arguments = ["--config-file=\(config)", "--nofork", "--print-address=1"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        dbus = p
        busAddress = try Self.readLine(out).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func readLine(_ pipe: Pipe) throws -> String {
        var bytes: [UInt8] = []
        let fd = pipe.fileHandleForReading.fileDescriptor
        var c: UInt8 = 0
        while read(fd, &c, 1) == 1 {
            if c == UInt8(ascii: "\n") { break }
            bytes.append(c)
        }
        guard !bytes.isEmpty else { throw FerryError(.failed, "child printed nothing") }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: The agent

    /// Starts ferryd and waits until it owns its name on the bus; `umask`: the one it is started
    /// with (a shell sets it and execs the agent: the pid stays the agent's).
    /// `downloadDir`: false lets the agent choose (the download-folder setting, else XDG's).
    func startAgent(_ extra: [String] = [], environment extraEnv: [String: String] = [:], umask mask: String? = nil,
                    downloadDir: Bool = true) throws {
        let p = Process()
        // ip netns exec execs the agent: the pid stays the agent's.
        var (exe, args) = inNamespace(Self.ferryd, [
            "--state-dir", state] + (downloadDir ? ["--download-dir", downloads] : []) + ["--retry-base-ms", "100",
            "--retry-cap-ms", "2000", "--stall-timeout", "3", "--log-level", "debug",
            // The test machine's disk may be nearly full: keep a small reserve only.
            "--state-reserve-mb", "1", "--state-reserve-percent", "0"] + extra)
        if let mask { (exe, args) = ("/bin/sh", ["-c", "umask \(mask) && exec \"$0\" \"$@\"", exe] + args) }
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = environment.merging(extraEnv) { $1 }
        let log = FileHandle(forWritingAtPath: root + "/agent.log") ?? {
            FileManager.default.createFile(atPath: root + "/agent.log", contents: nil)
            return FileHandle(forWritingAtPath: root + "/agent.log")!
        }()
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        agent = p
        try waitForName()
    }

    func waitForName() throws {
        let r = try run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", BusNames.agent])
        guard r.status == 0 else { throw FerryError(.failed, "agent did not appear on the bus: \(r.stderr) \(agentLog)") }
    }

    var agentLog: String { (try? String(contentsOfFile: root + "/agent.log", encoding: .utf8)) ?? "" }

    /// Ends the private bus, as the end of a desktop session does.
    func stopBus() {
        guard let dbus, dbus.isRunning else { return }
        kill(dbus.processIdentifier, SIGKILL)
        dbus.waitUntilExit()
    }

    func killAgent(signal: Int32 = SIGKILL) {
        guard let agent, agent.isRunning else { return }
        kill(agent.processIdentifier, signal)
        agent.waitUntilExit()
    }

    // MARK: HTTP servers

    /// `also`: a second loopback address served on the same port (another origin).
    func startFaultServer(also: String? = nil) throws {
        let p = Process()
        let (exe, args) = inNamespace("/usr/bin/python3", [Self.packageRoot + "/Tests/Support/faultserver.py", "--root", www,
                                                          "--host", serverHost == "127.0.0.1" ? "127.0.0.1" : "0.0.0.0"]
                                                          + (also.map { ["--also", $0] } ?? []), server: true)
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        faultServer = p
        faultPort = Int(try Self.readLine(out)) ?? 0
    }

    /// The graphical display a test started (startDisplay, in Harness+Display.swift).
    var display: String?

    /// The test notification server; its Notify calls land in `notificationsFile`.
    var notificationsFile: String { root + "/notifications.jsonl" }
    var notificationServer: Process?
    var background: [Process] = []

    // MARK: Running commands

    /// `signaled`: ended by a signal (a trap, a crash); `status` is then the signal's number.
    struct Result {
        var status: Int32; var stdout: String; var stderr: String; var signaled = false
        /// The standard output as bytes (a picture, not text).
        var stdoutData = Data()
        /// The id `ferry download|upload` printed on its first line.
        func taskID() throws -> Int64 { try #require(Int64(stdout.split(separator: "\n").first ?? ""), "\(stdout) \(stderr)") }
    }

    @discardableResult
    func run(_ exe: String, _ args: [String], environment extra: [String: String] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = environment.merging(extra) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Read both pipes fully before waiting (no deadlock on big outputs).
        var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), signaled: p.terminationReason == .uncaughtSignal,
                      stdoutData: outData)
    }

    func ferry(_ args: String...) throws -> Result { try run(Self.ferry, args) }

    /// `ferry show ID --json` as a dictionary.
    func show(_ id: Int64) throws -> [String: Any] {
        let r = try run(Self.ferry, ["show", String(id), "--json"])
        guard r.status == 0, let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw FerryError(.failed, "ferry show failed: \(r.stderr)")
        }
        return obj
    }

    /// A new, private connection to this harness's bus (each call: a new client).
    func client() throws -> BusClient { try BusClient(address: busAddress) }

    /// Waits for a process to end by itself (bounded: a hang fails the test instead of CI).
    func waitForExit(_ p: Process, _ what: String, timeout: Double = 60) throws {
        try eventually("\(what) exited", timeout: timeout) { !p.isRunning }
        p.waitUntilExit()
    }

    /// Waits for a condition that an outside event makes true (bounded; fails the test on timeout).
    func eventually(_ what: String, timeout: Double = 30, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        throw FerryError(.failed, "timed out waiting for \(what)\n--- agent log ---\n\(agentLog)")
    }
}
