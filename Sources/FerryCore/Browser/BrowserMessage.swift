import FoundationEssentials

/// The browsers' native messaging, as Ferry's host speaks it (Chromium's and Firefox's
/// protocol): each message a 4-byte length in the machine's byte order, then that many bytes of
/// UTF-8 JSON. What the extension asks, and what the host answers, decided here without I/O.
public enum BrowserMessage {
    /// The most a message to the browser may hold (Chromium and Firefox: 1 MB).
    public static let maxToBrowser = 1_000_000
    /// The most the host takes from the browser: a download's URL, cookies and headers fit in
    /// far less; anything larger is refused, never read into memory.
    public static let maxFromBrowser = 256 << 10

    /// A request from the extension.
    public enum Request: Sendable, Equatable {
        case ping
        case download(Download)
    }

    /// A download the browser hands over: its final URL, and what the site needs to serve it to
    /// this user (the page that linked it, its cookies, the browser's User-Agent).
    public struct Download: Sendable, Equatable, Decodable {
        public var url: String
        public var referrer: String?
        /// "a=b; c=d", as a Cookie header carries them.
        public var cookies: String?
        public var userAgent: String?
        /// The name the browser would save it under (a name, or a path whose last part is one).
        public var filename: String?

        public init(
            url: String, referrer: String? = nil, cookies: String? = nil, userAgent: String? = nil,
            filename: String? = nil
        ) {
            self.url = url; self.referrer = referrer; self.cookies = cookies; self.userAgent = userAgent
            self.filename = filename
        }

        /// The task's header fields: they go to the URL's origin only, as every credential does.
        public var headers: [String: String] {
            var h: [String: String] = [:]
            if let cookies, !cookies.isEmpty { h["Cookie"] = cookies }
            if let referrer, !referrer.isEmpty { h["Referer"] = referrer }
            if let userAgent, !userAgent.isEmpty { h["User-Agent"] = userAgent }
            return h
        }

        /// The file's name, cleaned as a server's would be; nil when there is none to use.
        public var fileName: String? {
            filename.flatMap { FileNaming.sanitize(PathName.lastName(of: $0)) }
        }
    }

    /// A message the host cannot take: its error reply says why.
    public struct Refusal: Error, Equatable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    private struct Envelope: Decodable { var type: String }

    /// The request a message's JSON carries, or why it cannot be one.
    public static func request(_ bytes: [UInt8]) throws(Refusal) -> Request {
        let data = Data(bytes)
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: data)
        } catch DecodingError.dataCorrupted {
            throw Refusal("not valid JSON")
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw Refusal("not a JSON object")
        } catch {
            throw Refusal("no \"type\" string (ping or download)")
        }
        switch envelope.type {
        case "ping":
            return .ping
        case "download":
            guard let d = try? JSONDecoder().decode(Download.self, from: data) else {
                throw Refusal(
                    "a download needs \"url\" (a string); referrer, cookies, userAgent and filename are strings")
            }
            let scheme = d.url.prefix { $0 != ":" }.lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw Refusal(
                    "only http and https downloads go to Ferry, not \(scheme.isEmpty ? "this URL" : scheme + ":")")
            }
            for (name, value) in d.headers where !HeaderField.isValidValue(value) {
                throw Refusal("\(name) holds a line break or NUL")
            }
            return .download(d)
        default:
            throw Refusal("unknown type \"\(envelope.type.prefix(40))\" (ping or download)")
        }
    }

    /// A reply as its bytes on the wire: the length, then the JSON.
    public static func frame(_ json: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(json.count)) { Array($0) } + json
    }

    /// The length a frame's first four bytes announce.
    public static func length(_ header: [UInt8]) -> Int {
        header.withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
    }

    /// What the host answers: `{"ok":true,…}` (with the version, or the new task's id) or
    /// `{"ok":false,"error":…}`.
    public struct Reply: Encodable, Equatable {
        public var ok: Bool
        public var version: String?
        public var task: Int64?
        public var error: String?

        public static func version(_ v: String) -> Reply { Reply(ok: true, version: v) }
        public static func task(_ id: Int64) -> Reply { Reply(ok: true, task: id) }
        public static func error(_ message: String) -> Reply { Reply(ok: false, error: message) }

        /// The JSON, with the error cut so that the whole stays under `maxToBrowser`.
        public var json: [UInt8] {
            var r = self
            if let e = r.error, e.utf8.count > 4096 { r.error = String(e.prefix(4096)) + "…" }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return (try? [UInt8](encoder.encode(r))) ?? Array(#"{"ok":false}"#.utf8)
        }
    }
}
