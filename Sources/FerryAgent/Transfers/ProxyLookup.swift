import CFerryShim
import CGLib
import FerryBus
import FerryCore
import FoundationEssentials

/// The proxy a request goes through, as curl takes it.
struct ProxyChoice: Sendable, Equatable {
    /// For CURLOPT_PROXY: "" is direct (and stops curl from reading proxies from the environment).
    var curlProxy: String
    /// The proxy without its credentials, for messages and logs; nil when direct.
    var printable: String?

    static let direct = ProxyChoice(curlProxy: "", printable: nil)

    /// Whether the proxy's URL names a user ("http://user:pw@host:3128").
    var carriesCredentials: Bool {
        guard let sep = curlProxy.firstRange(of: "://") else { return false }
        return curlProxy[sep.upperBound...].contains("@")
    }

    /// From one of GProxyResolver's answers: "direct://", "http://user:pw@host:3128",
    /// "socks://host:1080". nil for a scheme curl does not speak.
    init?(resolverURI uri: String) {
        guard let sep = uri.firstRange(of: "://") else { return nil }
        let scheme = uri[..<sep.lowerBound].lowercased()
        var rest = String(uri[sep.upperBound...])
        if scheme == "direct" { self = .direct; return }
        // SOCKS: the proxy resolves the name (socks5h), so a host only it can reach works.
        let curlScheme: String
        switch scheme {
        case "http", "https", "socks4", "socks4a", "socks5h": curlScheme = scheme
        case "socks", "socks5": curlScheme = "socks5h"
        default: return nil
        }
        while rest.hasSuffix("/") { rest.removeLast() }
        let hostPart = rest.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? rest
        guard !hostPart.isEmpty else { return nil }
        curlProxy = curlScheme + "://" + rest
        printable = curlScheme + "://" + hostPart
    }

    init(curlProxy: String, printable: String?) {
        self.curlProxy = curlProxy
        self.printable = printable
    }
}

/// The desktop's proxy for each URL: GIO's default GProxyResolver — GNOME's proxy settings
/// through glib-networking, libproxy (KDE, PAC files) where GIO has it, else the environment
/// (http_proxy, no_proxy…). Asked asynchronously: a PAC script or a WPAD lookup never blocks
/// the loop. Without glib-networking GIO has only its dummy resolver ("always direct"), and
/// curl is left to read the environment itself.
final class ProxyLookup {
    enum Answer: Sendable, Equatable {
        /// Leave CURLOPT_PROXY alone (curl reads http_proxy and friends).
        case curlDecides
        case use(ProxyChoice)
        /// The resolver failed (a PAC script that cannot be fetched, …): the words say why.
        case failed(String)
    }

    private let resolver: OpaquePointer?
    /// Answers by origin (scheme://host:port) for `keptMicroseconds`, and the callers waiting for
    /// an answer being asked: 3,000 small files from one host ask the resolver once, not 3,000
    /// times (libproxy reads its configuration and /etc/services on a thread of GLib's pool for
    /// each). Gone when the network changes.
    private var answers: [String: (answer: Answer, at: Int64)] = [:]
    private var asking: [String: [(Answer) -> Void]] = [:]
    static let keptMicroseconds: Int64 = 30_000_000

    init() {
        // GIO's resolvers read GSettings, and GSettings aborts the process when no schema is
        // installed at all (a stripped container): then curl reads the environment.
        guard g_settings_schema_source_get_default() != nil else { resolver = nil; return }
        let resolver = g_proxy_resolver_get_default()
        let typeName =
            resolver.flatMap { r in
                g_type_name_from_instance(UnsafeMutableRawPointer(r).assumingMemoryBound(to: GTypeInstance.self)).map {
                    String(cString: $0)
                }
            } ?? ""
        self.resolver = typeName == "GDummyProxyResolver" || typeName.isEmpty ? nil : resolver
    }

    /// Whether GIO has a real resolver (glib-networking installed).
    var isDesktopResolver: Bool { resolver != nil }

    /// The network changed: the desktop's answers may too (another network's PAC, WPAD).
    func forget() { answers = [:] }

    /// Calls `done` on the loop with the proxy for `url` (at once when its origin's is known).
    func lookup(_ url: String, _ done: @escaping (Answer) -> Void) {
        guard resolver != nil else { done(.curlDecides); return }
        // The answer goes by origin; the URL as written names it well enough here (a parse per
        // start cost more than the rest of the look-up).
        let key = DownloadURL.plainParts(url).map { $0.origin.lowercased() } ?? Origin(url)?.description ?? url
        let now = Int64(g_get_monotonic_time())
        if let known = answers[key], now - known.at < Self.keptMicroseconds { done(known.answer); return }
        guard asking[key] == nil else { asking[key]!.append(done); return }
        asking[key] = [done]
        ask(url) { [weak self] answer in
            guard let self else { return }
            if case .failed = answer {
                self.answers[key] = nil
            } else {
                self.answers[key] = (answer, Int64(g_get_monotonic_time()))
            }
            for waiting in self.asking.removeValue(forKey: key) ?? [] { waiting(answer) }
        }
    }

    private func ask(_ url: String, _ done: @escaping (Answer) -> Void) {
        guard let resolver else { done(.curlDecides); return }
        // The resolver's URIs, or why there are none; GNOME's credentials added for https.
        let finish: ([String]?, String) -> Void = { answers, why in
            guard let answers else { done(.failed("the desktop's proxy settings could not be read: \(why)")); return }
            done(ProxyLookup.choose(answers.map { DesktopProxyCredentials.added(to: $0, for: url) }))
        }
        g_proxy_resolver_lookup_async(
            resolver, url, nil,
            { source, result, data in
                let finish = Box<([String]?, String) -> Void>.take(data!)
                var error: UnsafeMutablePointer<GError>?
                guard let list = g_proxy_resolver_lookup_finish(OpaquePointer(source), result, &error) else {
                    let message = error.map { String(cString: $0.pointee.message) } ?? "no answer"
                    g_clear_error(&error)
                    finish(nil, message)
                    return
                }
                defer { g_strfreev(list) }
                var answers: [String] = []
                var i = 0
                while let p = list[i] { answers.append(String(cString: p)); i += 1 }
                finish(answers, "")
            }, Box.retained(finish))
    }

    /// The first answer curl can use (GIO lists them in the order to try).
    static func choose(_ answers: [String]) -> Answer {
        for a in answers { if let c = ProxyChoice(resolverURI: a) { return .use(c) } }
        return answers.isEmpty ? .use(.direct) : .failed("no proxy curl can use among \(answers.map(printable))")
    }

    private static func printable(_ uri: String) -> String {
        guard let sep = uri.firstRange(of: "://") else { return uri }
        let rest = uri[sep.upperBound...]
        return String(uri[..<sep.upperBound]) + (rest.split(separator: "@").last.map(String.init) ?? "")
    }
}
