/// The file extension a Content-Type implies, for a download whose name has none (`/video`
/// sent as `video/webm` is saved as `video.webm`, as browsers save it). A fixed table of the
/// types downloads commonly have, so that the name does not depend on the machine's MIME
/// database; a generic type (`application/octet-stream`) implies none.
public enum MediaType {
    public static func fileExtension(_ contentType: String?) -> String? {
        guard let type = contentType?.split(separator: ";").first?.trimmingSpaces.lowercased() else { return nil }
        return extensions[type].map { "." + $0 }
    }

    static let extensions: [String: String] = [
        "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz",
        "application/x-gzip": "gz", "application/x-tar": "tar", "application/x-xz": "xz",
        "application/x-bzip2": "bz2", "application/zstd": "zst", "application/x-7z-compressed": "7z",
        "application/vnd.rar": "rar", "application/x-iso9660-image": "iso",
        "application/vnd.debian.binary-package": "deb", "application/x-rpm": "rpm",
        "application/json": "json", "application/xml": "xml", "application/epub+zip": "epub",
        "application/msword": "doc", "application/rtf": "rtf",
        "application/vnd.oasis.opendocument.text": "odt", "application/vnd.oasis.opendocument.spreadsheet": "ods",
        "application/vnd.oasis.opendocument.presentation": "odp",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
        "application/vnd.ms-excel": "xls", "application/x-msdownload": "exe",
        "application/vnd.android.package-archive": "apk", "application/x-apple-diskimage": "dmg",
        "application/wasm": "wasm", "application/x-bittorrent": "torrent",
        "text/plain": "txt", "text/html": "html", "text/css": "css", "text/csv": "csv",
        "text/calendar": "ics", "text/markdown": "md", "text/xml": "xml", "text/javascript": "js",
        "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
        "image/svg+xml": "svg", "image/avif": "avif", "image/heic": "heic", "image/tiff": "tiff",
        "image/bmp": "bmp", "image/x-icon": "ico", "image/vnd.microsoft.icon": "ico",
        "audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/opus": "opus", "audio/flac": "flac",
        "audio/wav": "wav", "audio/x-wav": "wav", "audio/aac": "aac", "audio/mp4": "m4a", "audio/webm": "weba",
        "video/mp4": "mp4", "video/webm": "webm", "video/ogg": "ogv", "video/x-matroska": "mkv",
        "video/quicktime": "mov", "video/x-msvideo": "avi", "video/mpeg": "mpeg",
        "font/woff2": "woff2", "font/woff": "woff", "font/ttf": "ttf", "font/otf": "otf",
    ]
}
