import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The harness's helper processes and servers: spawned helpers, the notification server, nginx,
/// the fault server's URLs and request log, the files they serve.
extension Harness {
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
    /// `locations`: more of the server block (a test's own `location`s).
    func startNginx(tls: Bool = false, http2: Bool = false, locations: String = "") throws -> String {
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
            log_format validators '$request_uri|$http_range|$http_if_range|$status';
            access_log \(root)/nginx/logs/validators.log validators;
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
                \(locations)
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
        var host: String?; var authorization: String?; var cookie: String?; var apikey: String?
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
}
