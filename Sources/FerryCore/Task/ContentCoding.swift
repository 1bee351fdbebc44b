/// What a download saves of a response the server sent content-encoded (gzip, deflate, br,
/// zstd): the decoded document, as browsers and NSURLSession download tasks save it — unless
/// the file is itself a compressed file that the server labels so (Apache's `AddEncoding`
/// on `.gz`, a `Content-Type: application/gzip`), which is kept byte for byte.
///
/// The agent asks for no encoding (`Accept-Encoding: identity`: lengths stay known and ranges
/// mean bytes of the file), so this matters only for servers that encode anyway.
public enum ContentCoding {
    /// Name endings of files that are compressed as a whole.
    static let compressedEndings: Set<String> = [
        ".gz", ".tgz", ".taz", ".gzip", ".svgz", ".z", ".zz", ".br", ".zst", ".zstd", ".tzst",
    ]
    /// Media types of compressed files (a server that says both means the file).
    static let compressedTypes: Set<String> = [
        "application/gzip", "application/x-gzip", "application/x-gunzip", "application/gzipped",
        "application/x-compress", "application/x-compressed", "application/zstd", "application/x-zstd",
        "application/x-brotli", "application/x-tgz", "application/x-gtar",
    ]

    /// True when `name` (a file name or a URL's last segment) names a compressed file.
    public static func namesCompressedFile(_ name: String?) -> Bool {
        // Each ending is one extension: the name's last one, in lower case, is looked up.
        guard let name, let dot = name.lastIndex(of: ".") else { return false }
        return compressedEndings.contains(name[dot...].lowercased())
    }

    /// True when a response's `Content-Encoding` asks for decoding (not absent, not identity).
    public static func isEncoded(_ contentEncoding: String?) -> Bool {
        guard let e = contentEncoding?.trimmingSpaces.lowercased(), !e.isEmpty else { return false }
        return e != "identity"
    }

    /// True when the response is a compressed file labelled as encoded: keep its bytes.
    public static func isLabelledFile(contentType: String?, name: String?) -> Bool {
        if namesCompressedFile(name) { return true }
        guard let type = contentType?.split(separator: ";").first.map({ $0.trimmingSpaces.lowercased() }) else {
            return false
        }
        return compressedTypes.contains(type)
    }

    /// A decoded answer may grow past `decodedFloor` bytes only while it stays within
    /// `decodedRatio` times the encoded bytes it came from: text compresses 5 to 20 times, a
    /// decompression bomb (zeros) about 1,000. Refused by the agent on purpose, whatever
    /// libcurl would buffer.
    public static let decodedFloor: Int64 = 8 << 20
    public static let decodedRatio: Int64 = 100

    /// Whether `decoded` bytes from `encoded` are past the bound; `encoded` is read only when
    /// the floor is passed (`encoded` is curl's count, so it costs a call).
    public static func beyondBound(decoded: Int64, encoded: () -> Int64) -> Bool {
        decoded > decodedFloor && decoded > decodedRatio * max(1, encoded())
    }

    /// The words for an answer refused by that bound.
    public static func boundMessage(decoded: Int64, encoded: Int64) -> String {
        "the server's content-encoded answer decodes to more than \(decodedRatio) times its size (\(decoded) bytes "
            + "from \(encoded)): refused as a decompression bomb"
    }

    /// The words for an answer libcurl could not hold decoded (what one read of it became).
    public static func boundMessage(decodedBeyondBufferOf curlMessage: String) -> String {
        "the server's content-encoded answer decodes to more than libcurl holds from one read (\(curlMessage)): "
            + "refused as a decompression bomb"
    }

    /// Whether a request for `record` lets curl decode an encoded answer: not when the task
    /// learnt its file is kept encoded, nor when its name says it is a compressed file.
    public static func decodes(_ record: TaskRecord) -> Bool {
        guard record.kind == .download, !record.keepsEncoding else { return false }
        let name =
            record.output?.split(separator: "/").last.map(String.init)
            ?? record.suggestedName ?? FileNaming.urlName(record.url)
        return !namesCompressedFile(name)
    }
}
