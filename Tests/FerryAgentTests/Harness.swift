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
    private var nginx: Process?
    private(set) var faultPort = 0
    private(set) var nginxPort = 0
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

    // MARK: A graphical display

    private(set) var display: String?

    /// Can this machine show a window to tests (Xvfb, the accessibility bus, pyatspi)?
    /// Real input events (XTest) for what AT-SPI cannot do in GTK 4.8 (activate a list row).
    static var canSendInput: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/xdotool") }

    static var canShowWindows: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb")
            && FileManager.default.isExecutableFile(atPath: "/usr/libexec/at-spi-bus-launcher")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/pyatspi")
            && FileManager.default.isExecutableFile(atPath: buildDirectory + "/ferry-downloads")
    }

    /// Starts Xvfb on a free display and the accessibility bus on the private session bus, so a
    /// GTK window started with `environment` can be read and driven through AT-SPI.
    func startDisplay() throws {
        let x = Process()
        x.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        x.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1024x768x24"]
        let out = Pipe()
        x.standardOutput = out
        x.standardError = FileHandle.nullDevice
        try x.run()
        background.append(x)
        display = ":" + (try Self.readLine(out)).trimmingCharacters(in: .whitespaces)
        let l = Process()
        l.executableURL = URL(fileURLWithPath: "/usr/libexec/at-spi-bus-launcher")
        l.arguments = ["--launch-immediately"]
        l.environment = environment
        l.standardOutput = FileHandle.nullDevice
        l.standardError = FileHandle.nullDevice
        try l.run()
        background.append(l)
        let r = try run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", "org.a11y.Bus"])
        guard r.status == 0 else { throw FerryError(.failed, "the accessibility bus did not start") }
    }

    private func killEverythingOnThisBus() {
        let mark = Array("DBUS_SESSION_BUS_ADDRESS=\(busAddress)\u{0}".utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != getpid(),
                  let env = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { continue }
            if env.count >= mark.count, Array(env).windowContains(mark) { kill(pid, SIGKILL) }
        }
    }

    /// Runs Tests/Support/window-driver.py (pyatspi) with `args`; its stdout.
    func windowDriver(_ args: String...) throws -> String {
        var r = try run("/usr/bin/python3", [Self.packageRoot + "/Tests/Support/window-driver.py"] + args)
        // The driver itself (libatspi under pyatspi) can die of a signal on a loaded machine:
        // a reading command is asked once more; one that acts is not (it may have acted).
        if r.signaled, ["rows", "has", "gone", "get"].contains(args.first ?? "") {
            r = try run("/usr/bin/python3", [Self.packageRoot + "/Tests/Support/window-driver.py"] + args)
        }
        guard r.status == 0 else {
            throw FerryError(.failed, "window-driver \(args): \(r.signaled ? "killed by signal \(r.status)" : r.stderr)")
        }
        return r.stdout
    }

    /// The test notification server; its Notify calls land in `notificationsFile`.
    var notificationsFile: String { root + "/notifications.jsonl" }
    private var notificationServer: Process?
    private var background: [Process] = []

    /// A helper process that runs until the harness ends, its output going to `output`.
    func spawn(_ exe: String, _ args: [String], output: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = environment
        p.standardOutput = try Self.writable(output)
        p.standardError = FileHandle.nullDevice
        try p.run()
        background.append(p)
    }

    /// A helper process the test waits for (killed with the harness if still running).
    func spawnWaitable(_ exe: String, _ args: [String], output: String? = nil, errors: String? = nil,
                       environment extra: [String: String] = [:]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = environment.merging(extra) { $1 }
        p.standardOutput = try output.map(Self.writable) ?? FileHandle.nullDevice
        p.standardError = try errors.map(Self.writable) ?? FileHandle.nullDevice
        try p.run()
        background.append(p)
        return p
    }

    /// A file opened for a helper's output, emptied. Opened in place: FileManager.createFile
    /// writes a new file and renames it over the path, which once turned /dev/null into a
    /// regular file for the whole machine.
    static func writable(_ path: String) throws -> FileHandle {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FerryError(.failed, "cannot open \(path) for writing: errno \(errno)") }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// With `hanging`, the server records Notify calls and never answers them.
    func startNotificationServer(hanging: Bool = false) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.packageRoot + "/Tests/Support/notification-server.py", notificationsFile] + (hanging ? ["--hang"] : [])
        p.environment = environment
        p.standardError = FileHandle.nullDevice
        try p.run()
        notificationServer = p
        let r = try run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", "org.freedesktop.Notifications"])
        guard r.status == 0 else { throw FerryError(.failed, "notification server did not start") }
    }

    struct Popup: Decodable { var id: Int; var summary: String; var body: String; var icon: String; var actions: [String]; var hints: [String: AnyValue] }
    /// Hint values as recorded (strings, numbers, booleans).
    enum AnyValue: Decodable, Equatable {
        case string(String), number(Double), bool(Bool)
        init(from d: Decoder) throws {
            let c = try d.singleValueContainer()
            if let b = try? c.decode(Bool.self) { self = .bool(b) }
            else if let n = try? c.decode(Double.self) { self = .number(n) }
            else { self = .string(try c.decode(String.self)) }
        }
    }

    /// A desktop where xdg-open sends PDFs to a recorder script; returns (env, file of opened paths).
    func pdfOpenerDesktop() throws -> ([String: String], String) {
        let home = root + "/home"
        let opened = root + "/opened.txt"
        try FileManager.default.createDirectory(atPath: home + "/.local/share/applications", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.config", withIntermediateDirectories: true)
        let script = root + "/recorder.sh"
        try "#!/bin/sh\necho \"$1\" >> \(opened)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try "[Desktop Entry]\nType=Application\nName=Recorder\nExec=\(script) %f\nMimeType=application/pdf;inode/directory;\n"
            .write(toFile: home + "/.local/share/applications/recorder.desktop", atomically: true, encoding: .utf8)
        try "[Default Applications]\napplication/pdf=recorder.desktop\ninode/directory=recorder.desktop\n"
            .write(toFile: home + "/.config/mimeapps.list", atomically: true, encoding: .utf8)
        // xdg-utils reads mimeapps.list only with a display set (none is used); the MIME database
        // lives in /usr/share.
        return (["XDG_CURRENT_DESKTOP": "X-Generic", "DISPLAY": ":99", "BROWSER": "", "XDG_DATA_DIRS": "/usr/share"], opened)
    }

    func popups() throws -> [Popup] {
        guard let text = try? String(contentsOfFile: notificationsFile, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Popup.self, from: Data($0.utf8)) }
    }

    /// nginx (optionally with TLS, using a fresh self-signed certificate for 127.0.0.1); returns the cert path.
    @discardableResult
    /// `http2`: with TLS, also HTTP/2 (ALPN), as most HTTPS servers offer it.
    func startNginx(tls: Bool = false, http2: Bool = false) throws -> String {
        nginxPort = try Self.freePort()
        let cert = root + "/nginx/cert.pem", key = root + "/nginx/key.pem"
        if tls {
            let r = try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                                 "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                 "-keyout", key, "-out", cert])
            guard r.status == 0 else { throw FerryError(.failed, "openssl: \(r.stderr)") }
        }
        let listen = tls ? "listen 127.0.0.1:\(nginxPort) ssl\(http2 ? " http2" : ""); ssl_certificate \(cert); ssl_certificate_key \(key);"
                         : "listen 127.0.0.1:\(nginxPort);"
        let conf = root + "/nginx/nginx.conf"
        try """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(root)/nginx/nginx.pid;
        error_log \(root)/nginx/logs/error.log;
        events { worker_connections 64; }
        http {
            access_log \(root)/nginx/logs/access.log;
            log_format connections '$connection $request_uri';
            access_log \(root)/nginx/logs/connections.log connections;
            client_body_temp_path \(root)/nginx/tmp;
            proxy_temp_path \(root)/nginx/tmp;
            fastcgi_temp_path \(root)/nginx/tmp;
            uwsgi_temp_path \(root)/nginx/tmp;
            scgi_temp_path \(root)/nginx/tmp;
            server {
                \(listen)
                root \(www);
                location /slow/ { limit_rate 20k; }   # a slow transfer, 20 kB/s
                # Files labelled as gzip-encoded (Apache's AddEncoding does it to .gz files).
                location /labelled/ { add_header Content-Encoding gzip; }
                location /typed/ { types { } default_type application/gzip; add_header Content-Encoding gzip; }
            }
        }
        """.write(toFile: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        p.arguments = ["-p", root + "/nginx", "-c", conf]
        p.standardError = FileHandle.nullDevice
        try p.run()
        nginx = p
        // nginx has no readiness signal: wait until it accepts a connection.
        try eventually("nginx listening") { Self.canConnect(self.nginxPort) }
        return cert
    }

    /// How many TCP connections nginx served requests on (its $connection numbers).
    func nginxConnections() throws -> (requests: Int, connections: Int) {
        let lines = try String(contentsOfFile: root + "/nginx/logs/connections.log", encoding: .utf8).split(separator: "\n")
        return (lines.count, Set(lines.map { $0.split(separator: " ").first ?? "" }).count)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: UInt16(port).bigEndian, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        return withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    func faultURL(_ name: String, _ query: String = "") -> String {
        "http://\(serverHost):\(faultPort)/\(name)" + (query.isEmpty ? "" : "?" + query)
    }

    struct Request: Decodable {
        var path: String; var query: String; var range: String?; var if_range: String?
        var status: Int; var sent: Int; var start: Double; var end: Double?; var held: Int?
        var method: String?; var received: Int?; var offset: Int?
        var host: String?; var authorization: String?; var cookie: String?
        var rangeStart: Int? { range.flatMap { Int($0.dropFirst("bytes=".count).split(separator: "-").first ?? "") } }
    }

    /// Bounded PATCHes, each from where the one before ended (one cut short too): no byte
    /// sent twice, none skipped.
    static func eachFromTheLastEnd(_ patches: [Request]) -> Bool {
        patches.first?.offset == 0 && zip(patches, patches.dropFirst()).allSatisfy { $1.offset == ($0.offset ?? 0) + ($0.received ?? 0) }
    }

    func serverLog() throws -> [Request] {
        let (exe, args) = inNamespace("/usr/bin/curl", ["-sf", "http://127.0.0.1:\(faultPort)/_log"], server: true)
        let r = try run(exe, args)
        return try JSONDecoder().decode([Request].self, from: Data(r.stdout.utf8))
    }

    func releaseHolds() throws {
        let (exe, args) = inNamespace("/usr/bin/curl", ["-s", "-X", "POST", "http://127.0.0.1:\(faultPort)/_release"], server: true)
        _ = try run(exe, args)
    }

    /// A file of pseudo-random bytes in the web root.
    @discardableResult
    func makeFile(_ name: String, size: Int) throws -> Data {
        var g = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: size)
        for i in stride(from: 0, to: size, by: 8) {
            var v = g.next()
            withUnsafeBytes(of: &v) { raw in for j in 0..<min(8, size - i) { bytes[i + j] = raw[j] } }
        }
        let data = Data(bytes)
        try data.write(to: URL(fileURLWithPath: www + "/" + name))
        return data
    }

    // MARK: Running commands

    /// `signaled`: ended by a signal (a trap, a crash); `status` is then the signal's number.
    struct Result {
        var status: Int32; var stdout: String; var stderr: String; var signaled = false
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
                      stderr: String(decoding: errData, as: UTF8.self), signaled: p.terminationReason == .uncaughtSignal)
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

private extension Array where Element == UInt8 {
    func windowContains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}
