import FerryBus
import FerryCore
import Glibc

/// Ferry's native messaging host: the browser starts it when its extension first sends a
/// message, writes requests to its stdin and reads replies from its stdout (`BrowserMessage`
/// frames), and closes stdin when it is done with it. Downloads go to a session of their own.
final class BrowserHost {
    static let session = BusNames.browserSession
    private var api: AgentProxy?

    /// Answers message after message; the exit status when stdin ends or cannot be read on.
    func run() -> Int32 {
        while true {
            let header = Self.read(4)
            if header.count < 4 { return 0 }  // the browser closed stdin (or left half a length): done
            let length = BrowserMessage.length(header)
            guard length <= BrowserMessage.maxFromBrowser else {
                // What follows cannot be skipped safely: say why, and end.
                send(.error("a message of \(length) bytes: the host takes at most \(BrowserMessage.maxFromBrowser)"))
                return 1
            }
            let body = Self.read(length)
            guard body.count == length else {
                send(.error("a truncated message: \(body.count) of the \(length) bytes announced"))
                return 1
            }
            send(answer(body))
        }
    }

    func answer(_ bytes: [UInt8]) -> BrowserMessage.Reply {
        do {
            switch try BrowserMessage.request(bytes) {
            case .ping: return .version(FerryRelease.version)
            case .download(let d): return .task(try download(d))
            }
        } catch let r as BrowserMessage.Refusal {
            return .error(r.message)
        } catch let e as FerryError {
            return .error(e.message)
        } catch {
            return .error("\(error)")
        }
    }

    /// Queues the download with the browser's cookies, referrer and User-Agent as its header
    /// fields (sent to the URL's origin only), under the browser's name in the download folder.
    private func download(_ d: BrowserMessage.Download) throws -> Int64 {
        let api = try agent()
        var options = TaskOptions()
        options.headers = d.headers.isEmpty ? nil : d.headers
        options.description = "From the browser"
        if let name = d.fileName {
            let folder = try api.getStatus().downloadFolder ?? XDG.downloadDirectory
            options.output = folder + "/" + name  // an existing name gets " (1)": never overwritten
        }
        return try api.createDownload(session: Self.session, url: d.url, options: options)
    }

    /// The agent, its browser session opened once (D-Bus activation starts the agent).
    private func agent() throws -> AgentProxy {
        if let api { return api }
        let proxy = AgentProxy(try BusClient())
        var options = SessionOptions()
        options.keepEvents = false  // as the user's own session: nobody reads its events
        _ = try proxy.openSession(identifier: Self.session, configuration: options)
        api = proxy
        return proxy
    }

    private func send(_ reply: BrowserMessage.Reply) {
        let bytes = BrowserMessage.frame(reply.json)
        var at = 0
        while at < bytes.count {
            let n = bytes[at...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { exit(0) }  // the browser went away
            at += n
        }
    }

    /// Up to `count` bytes of stdin: fewer only at its end.
    static func read(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out[got...].withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += n
        }
        return Array(out[0..<got])
    }
}
