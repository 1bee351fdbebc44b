import FoundationEssentials

/// Turning server-supplied names into safe local file names.
/// Rules: no path separators, no `..` or leading dots, no control characters,
/// at most 255 bytes (the extension is kept), and never an existing file.
public enum FileNaming {
    public static let maxBytes = 255
    public static let fallback = "download"

    /// A safe single path component, or nil when nothing usable is left.
    public static func sanitize(_ raw: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for s in raw.unicodeScalars {
            switch s.value {
            case 0..<0x20, 0x7F, 0x80..<0xA0: continue  // control characters
            case 0x2F, 0x5C: scalars.append("_")  // '/' and '\'
            case 0x202A...0x202E, 0x2066...0x2069: continue  // bidi overrides hide extensions
            case 0x200B, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029, 0x2060, 0xFEFF: continue  // unseen marks
            default: scalars.append(s)
            }
        }
        var name = String(scalars).trimmingSpaces
        while name.hasPrefix(".") { name.removeFirst() }  // no hidden files, no ".."
        name = name.trimmingSpaces
        guard !name.isEmpty else { return nil }
        return truncate(name)
    }

    /// Shortens to `maxBytes` UTF-8 bytes on a character boundary, keeping a short extension.
    static func truncate(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        let (stem, ext) = split(name)
        let keepExt = ext.utf8.count <= 16 ? ext : ""
        var out = ""
        for ch in stem {
            if out.utf8.count + String(ch).utf8.count + keepExt.utf8.count > maxBytes { break }
            out.append(ch)
        }
        return out + keepExt
    }

    /// "report.final.pdf" -> ("report.final", ".pdf"); "archive" -> ("archive", "").
    static func split(_ name: String) -> (String, String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    /// The file name from a Content-Disposition header value (RFC 6266): `filename*` wins.
    public static func contentDispositionName(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for part in splitParameters(header).dropFirst() {
            guard let eq = part.firstIndex(of: "=") else { continue }
            let key = part[..<eq].trimmingSpaces.lowercased()
            var value = part[part.index(after: eq)...].trimmingSpaces
            if key == "filename*" {
                // charset'lang'percent-encoded
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                // RFC 8187 names UTF-8 and ISO-8859-1; browsers decode both.
                switch pieces.count == 3 ? pieces[0].lowercased() : "" {
                case "utf-8": extended = pieces[2].percentDecoded
                case "iso-8859-1": extended = pieces[2].percentDecodedLatin1
                default: break
                }
            } else if key == "filename" {
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast()).replacing("\\\"", with: "\"")
                }
                plain = value
            }
        }
        return extended ?? plain
    }

    /// Splits on ';' outside quotes.
    static func splitParameters(_ s: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for ch in s {
            if escaped { current.append(ch); escaped = false; continue }
            if ch == "\\" && quoted { current.append(ch); escaped = true; continue }
            if ch == "\"" { quoted.toggle() }
            if ch == ";" && !quoted { parts.append(current); current = ""; continue }
            current.append(ch)
        }
        parts.append(current)
        return parts
    }

    /// The last path component of a URL, percent-decoded.
    public static func urlName(_ url: String) -> String? {
        let last: Substring?
        if let parts = DownloadURL.plainParts(url) {
            // The last non-empty segment, as split(separator: "/").last, without the array.
            var path = parts.path
            while path.last == "/" { path.removeLast() }
            last = path.isEmpty ? nil : path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...]
        } else {
            guard let comps = URLComponents(string: url) else { return nil }
            last = comps.percentEncodedPath.split(separator: "/").last.map { Substring($0) }
        }
        guard let last else { return nil }
        return last.percentDecoded ?? String(last)
    }

    /// The name a response suggests beyond the task's URL, as browsers name a download:
    /// Content-Disposition's; else the last segment of the URL a redirect led to; and a name
    /// without an extension gets the one its Content-Type implies. Nil when it says nothing more
    /// than the task's own URL.
    public static func responseName(
        contentDisposition: String?, finalURL: String?, taskURL: String, contentType: String?
    ) -> String? {
        if let name = contentDisposition.flatMap(contentDispositionName) { return name }
        let own = urlName(taskURL).flatMap(sanitize)  // read once: this runs at every download's head
        let base = finalURL.flatMap(urlName).map { sanitize($0) ?? fallback } ?? own ?? fallback
        let named = split(base).1.isEmpty ? MediaType.fileExtension(contentType).map { base + $0 } ?? base : base
        return named == own ? nil : named
    }

    /// The name a finished download gets: Content-Disposition, else the URL, else "download".
    public static func suggestedFileName(contentDisposition: String?, url: String) -> String {
        if let cd = contentDisposition, let name = sanitize(cd) { return name }
        if let u = urlName(url), let name = sanitize(u) { return name }
        return fallback
    }

    /// "name.ext", else "name (1).ext", "name (2).ext", … — the first that does not exist.
    public static func unique(_ name: String, exists: (String) -> Bool) -> String {
        if !exists(name) { return name }
        var n = 1
        while true {
            let candidate = numbered(name, n)
            if !exists(candidate) { return candidate }
            n += 1
        }
    }

    /// "a.pdf", 2 → "a (2).pdf".
    public static func numbered(_ name: String, _ n: Int) -> String {
        let (stem, ext) = split(name)
        return truncate("\(stem) (\(n))\(ext)")
    }
}
