/// A list of URLs to download, as `wget -i` and `aria2c -i` read one: a URL a line, blank lines
/// and `#` comments skipped; aria2's option lines (indented, after their URL) `out=NAME` and
/// `dir=FOLDER` name that URL's file and folder. Anything else indented is refused by name.
public enum URLList {
    public struct Entry: Sendable, Equatable {
        public var url: String
        /// aria2's `out=`: the file's name (in `dir`, or the download's folder).
        public var name: String?
        /// aria2's `dir=`: the file's folder.
        public var folder: String?
        public init(url: String, name: String? = nil, folder: String? = nil) {
            self.url = url; self.name = name; self.folder = folder
        }
    }

    /// The entries of `text`, or an error naming the line (`source` names the file).
    public static func parse(_ text: String, source: String) throws -> [Entry] {
        var entries: [Entry] = []
        // "\r\n" is one Character: split on every line break, Windows' too.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = line.trimmingSpaces
            if content.isEmpty || content.hasPrefix("#") { continue }
            guard line.first == " " || line.first == "\t" else {
                entries.append(Entry(url: content))
                continue
            }
            func refuse(_ why: String) -> FerryError {
                FerryError(.invalidArgument, "\(source), line \(index + 1): \(why): \(content.prefix(80))")
            }
            guard !entries.isEmpty else { throw refuse("an option line before any URL") }
            let parts = content.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces }
            guard parts.count == 2, !parts[1].isEmpty else { throw refuse("not NAME=VALUE") }
            switch parts[0] {
            case "out": entries[entries.count - 1].name = parts[1]
            case "dir": entries[entries.count - 1].folder = parts[1]
            default: throw refuse("'\(parts[0])' is not an option ferry takes here (out= and dir= are)")
            }
        }
        return entries
    }
}
