import FoundationEssentials
import Glibc

/// Whether the graphical display the environment names can be reached, asked without GTK: a
/// connection to its socket. An SSH session with a stale $DISPLAY, or a display that went away,
/// gets the text view instead of GTK's "cannot open display".
enum DisplayProbe {
    enum Endpoint: Equatable {
        case unixSocket(String)
        /// X11's abstract socket, tried with the socket file.
        case abstractSocket(String)
        case tcp(host: String, port: UInt16)
    }

    /// Where the display is: Wayland's socket, or X11's for "[host]:N[.S]".
    static func endpoints(wayland: String?, x11: String?, runtimeDir: String?) -> [Endpoint] {
        var found: [Endpoint] = []
        if let w = wayland, !w.isEmpty {
            if w.hasPrefix("/") {
                found.append(.unixSocket(w))
            } else if let dir = runtimeDir {
                found.append(.unixSocket(dir + "/" + w))
            }
        }
        if let x = x11, let colon = x.lastIndex(of: ":") {
            let host = String(x[..<colon])
            let number = x[x.index(after: colon)...].prefix { $0.isNumber }
            if let n = UInt16(number) {
                if host.isEmpty || host == "unix" {
                    found += [.unixSocket("/tmp/.X11-unix/X\(n)"), .abstractSocket("/tmp/.X11-unix/X\(n)")]
                } else if n < 59_535 {
                    found.append(.tcp(host: host, port: 6000 + n))
                }
            }
        }
        return found
    }

    /// True when one of the environment's displays accepts a connection.
    static var reachable: Bool {
        let env = ProcessInfo.processInfo.environment
        return endpoints(wayland: env["WAYLAND_DISPLAY"], x11: env["DISPLAY"], runtimeDir: env["XDG_RUNTIME_DIR"])
            .contains(where: connects)
    }

    private static func connects(_ endpoint: Endpoint) -> Bool {
        switch endpoint {
        case .unixSocket(let path): return unix(path, abstract: false)
        case .abstractSocket(let path): return unix(path, abstract: true)
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0 else { return false }
            defer { freeaddrinfo(list) }
            var entry = list
            while let e = entry {
                let fd = socket(
                    e.pointee.ai_family, e.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), e.pointee.ai_protocol)
                if fd >= 0 {
                    defer { close(fd) }
                    if connect(fd, e.pointee.ai_addr, e.pointee.ai_addrlen) == 0 { return true }
                }
                entry = e.pointee.ai_next
            }
            return false
        }
    }

    private static func unix(_ path: String, abstract: Bool) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let offset = abstract ? 1 : 0  // an abstract name starts with a NUL byte
        guard bytes.count + offset < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i + offset] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + offset + bytes.count + (abstract ? 0 : 1))
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
        }
    }
}
