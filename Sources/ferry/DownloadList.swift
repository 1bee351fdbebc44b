import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Several downloads in one command, as wget, aria2c and curl take them: URLs as arguments and
/// from `-i FILE` (or `-i -`, stdin), queued with one CreateDownloads call (all or none).
extension Download {
    /// The URLs given, the arguments' first, then the list's.
    func listed() throws -> [URLList.Entry] {
        var entries = urls.map { URLList.Entry(url: $0) }
        guard let inputFile else { return entries }
        let text: String
        if inputFile == "-" {
            text = Self.readAll(0)
        } else {
            let fd = open(inputFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw Refusal("cannot read the URL list \(inputFile): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            text = Self.readAll(fd)
        }
        do {
            entries += try URLList.parse(text, source: inputFile == "-" ? "stdin" : inputFile)
        } catch let e as FerryError {
            throw Refusal(e.message)
        }
        return entries
    }

    /// The options of one URL: the shared ones, with its own folder and name (aria2's dir= and
    /// out=; a name without a folder goes to --dir, else the download folder).
    func options(_ base: TaskOptions, for entry: URLList.Entry) throws -> TaskOptions {
        var o = base
        if let folder = entry.folder {
            o.directory = Self.absolute(folder)
            try Self.create(o.directory!)
        }
        if let name = entry.name {
            guard !name.contains("/"), name != ".", name != ".." else {
                throw Refusal("out=\(name): a file name, not a path (give its folder with dir=)")
            }
            o.output = (o.directory ?? Self.downloadFolder) + "/" + name
            o.directory = nil
        }
        return o
    }

    /// A URL as given, refused with a hint when it has no scheme (`example.org/f.pdf`): ferry
    /// does not guess http, which would send the request in clear text.
    static func withScheme(_ url: String) throws -> String {
        guard !url.contains("://") else { return url }
        let scheme = url.prefix { $0 != ":" && $0 != "/" }
        let named = url.dropFirst(scheme.count).first == ":"
        guard !named || scheme.contains(".") || scheme == "localhost" || url.hasPrefix("//") else { return url }
        let rest = url.hasPrefix("//") ? String(url.dropFirst(2)) : url
        throw Refusal("'\(url)' has no scheme: add https:// (ferry download https://\(rest))")
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The folder downloads go to when none is given: the setting, else the XDG download folder.
    static var downloadFolder: String {
        let set = (try? SettingsStore())?.string(Setting.downloadFolder.rawValue) ?? ""
        return set.isEmpty ? XDG.downloadDirectory : set
    }

    static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A request ferry refuses before asking the agent (a bad list, a value it cannot take): its
/// message on stderr, exit status 2, as the agent's refusals.
struct Refusal: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
