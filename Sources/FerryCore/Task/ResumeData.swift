import FoundationEssentials

/// The blob `CancelProducingResumeData` returns and `CreateDownloadFromResumeData` takes.
/// Versioned JSON (documented in the README), validated on the way in: garbage or a blob
/// from something else gets a clear error instead of a corrupt download.
public struct ResumeData: Codable, Sendable, Equatable {
    public static let format = "dev.ferry.resume-data"
    public static let currentVersion = 1

    public var format: String
    public var version: Int
    public var url: String
    /// The task whose staging bytes this blob refers to.
    public var task: Int64
    public var received: Int64
    public var expected: Int64?
    public var etag: String?
    public var lastModified: String?
    public var suggestedName: String?
    /// HMAC-SHA256 (hex) of the blob without it, by the agent that made it (see ResumeSeal).
    public var signature: String?
    /// Set by the agent once `signature` was checked; never read from or written to the blob.
    public var signedByAgent = false

    private enum CodingKeys: String, CodingKey {
        case format, version, url, task, received, expected, etag, lastModified, suggestedName, signature
    }

    /// The blob as signed: everything but the signature.
    public var unsigned: ResumeData {
        var d = self
        d.signature = nil; d.signedByAgent = false
        return d
    }

    public init(
        url: String, task: Int64, received: Int64, expected: Int64?, etag: String?,
        lastModified: String?, suggestedName: String?
    ) {
        self.format = Self.format; self.version = Self.currentVersion
        self.url = url; self.task = task; self.received = received; self.expected = expected
        self.etag = etag; self.lastModified = lastModified; self.suggestedName = suggestedName
    }

    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data())
    }

    public static func decode(_ bytes: [UInt8]) throws -> ResumeData {
        guard !bytes.isEmpty else { throw FerryError(.invalidResumeData, "resume data is empty") }
        guard bytes.count <= 65_536 else { throw FerryError(.invalidResumeData, "resume data is larger than 64 KiB") }
        struct Header: Decodable { var format: String?; var version: Int? }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)) else {
            throw FerryError(.invalidResumeData, "resume data is not Ferry resume data (not a JSON object)")
        }
        guard header.format == format else {
            throw FerryError(
                .invalidResumeData,
                "resume data is not Ferry resume data (format is \(header.format.map { "'\($0)'" } ?? "missing"))")
        }
        guard let version = header.version, version >= 1, version <= currentVersion else {
            throw FerryError(
                .invalidResumeData,
                "resume data version \(header.version.map(String.init) ?? "missing") is not supported (this agent "
                    + "reads version \(currentVersion))"
            )
        }
        guard let data = try? JSONDecoder().decode(ResumeData.self, from: Data(bytes)) else {
            throw FerryError(.invalidResumeData, "resume data is incomplete or malformed")
        }
        guard data.received >= 0, data.task > 0 else {
            throw FerryError(.invalidResumeData, "resume data has impossible values")
        }
        _ = try DownloadURL.validate(data.url)
        return data
    }
}
