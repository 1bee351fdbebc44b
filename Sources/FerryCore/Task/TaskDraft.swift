/// A new task's record from its request as a client gave it: every rule about what a client may
/// ask (absolute destinations, a file name that needs no cleaning, a checksum's form, header
/// fields, a method of the kind's, a priority from 0 to 1, the resumable protocols). Decided
/// without I/O: what a rule needs from the machine comes through `Lookups` (the shell's). Its
/// session, id and times are the core's to fill in.
public enum TaskDraft {
    /// What the rules ask the machine.
    public struct Lookups {
        /// An internationalised host name in ASCII (IDNA), nil when it cannot be.
        public var hostToASCII: (String) -> String?
        /// Whether a folder exists and may be written.
        public var writableFolder: (String) -> Bool
        public init(hostToASCII: @escaping (String) -> String?, writableFolder: @escaping (String) -> Bool) {
            self.hostToASCII = hostToASCII
            self.writableFolder = writableFolder
        }
    }

    /// A URL as a client typed it, in ASCII (IDNA) and checked: the URL and its host.
    public static func checkedURL(_ typed: String, _ look: Lookups) throws -> (url: String, host: String) {
        let url = try IRI.uri(typed, hostToASCII: look.hostToASCII)
        return (url, try DownloadURL.validate(url))
    }

    /// A new download (its session, id and times are the core's to fill in).
    public static func download(url typed: String, _ o: TaskOptions, _ look: Lookups) throws -> TaskRecord {
        let url = try IRI.uri(typed, hostToASCII: look.hostToASCII)
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: "", url: url, host: host)
        if let dir = o.directory {
            guard dir.hasPrefix("/") else {
                throw FerryError(.invalidDestination, "directory must be an absolute path: \(dir)")
            }
            guard look.writableFolder(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.directory = dir
        }
        if let out = o.output {
            guard r.directory == nil else {
                throw FerryError(.invalidArgument, "give either directory or output, not both")
            }
            guard out.hasPrefix("/") else {
                throw FerryError(.invalidDestination, "output must be an absolute path: \(out)")
            }
            let name = PathName.lastName(of: out)
            guard FileNaming.sanitize(name) == name, !out.hasSuffix("/") else {
                throw FerryError(.invalidDestination, "output file name is not acceptable: \(out)")
            }
            let dir = PathName.folder(of: out)
            guard look.writableFolder(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.output = out
        }
        if let sha256 = o.sha256 {
            let hex = sha256.lowercased()
            guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else {
                throw FerryError(.invalidArgument, "sha256 must be 64 hexadecimal digits")
            }
            r.sha256 = hex
        }
        try common(&r, o)
        return r
    }

    /// Several downloads, all or none; an error names the request it is about.
    public static func downloads(
        _ requests: [(url: String, options: TaskOptions)], _ look: Lookups
    ) throws -> [TaskRecord] {
        guard requests.count <= AgentCore.maxBatch else {
            throw FerryError(.invalidArgument, "at most \(AgentCore.maxBatch) tasks per call")
        }
        var records: [TaskRecord] = []
        records.reserveCapacity(requests.count)
        for (index, (url, options)) in requests.enumerated() {
            do {
                records.append(try download(url: url, options, look))
            } catch var e as FerryError where requests.count > 1 {
                e.message = "request \(index + 1): \(e.message)"
                throw e
            }
        }
        return records
    }

    /// An upload whose file is still to be given (a path, or the copy of a descriptor).
    public static func upload(url typed: String, _ o: TaskOptions, _ look: Lookups) throws -> TaskRecord {
        let url = try IRI.uri(typed, hostToASCII: look.hostToASCII)
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: "", url: url, host: host)
        r.kind = .upload
        try common(&r, o)
        switch o.resumable {
        case nil, "auto"?: break  // found out by the first attempt
        case "none"?: r.resumable = ResumableProtocol.none
        case "tus"?: r.resumable = .tus
        case "ietf"?: r.resumable = .ietf
        case let other?:
            throw FerryError(
                .invalidArgument, "option 'resumable' must be auto, tus, ietf or none, not '\(other.prefix(16))'")
        }
        return r
    }

    /// Options downloads and uploads share.
    private static func common(_ r: inout TaskRecord, _ o: TaskOptions) throws {
        if let d = o.description {
            guard d.utf8.count <= 4096 else { throw FerryError(.invalidArgument, "description longer than 4096 bytes") }
            r.description = d
        }
        if let h = o.headers {
            try HeaderField.checkFields(h)
            r.headers = h
        }
        if o.paused == true {
            r.state = .paused
            r.retryAt = o.earliestBegin  // kept for ResumeTask: then it waits for its time
        } else if let at = o.earliestBegin {  // waits for its time like a retry (the core arms the wake)
            r.state = .waiting
            r.reason = .scheduled
            r.retryAt = at
        }
        if let p = o.priority {
            guard p >= 0, p <= 1 else { throw FerryError(.invalidArgument, "priority \(p): must be from 0 to 1") }
            r.priority = p
        }
        if let rate = o.maxRate { r.maxRate = rate }
        if let n = o.maxAttempts, n > 0 { r.maxAttempts = n }
        if let t = o.timeout, t > 0 { r.deadline = Int64(t) * 1_000_000 }  // relative until the core dates it
        if let method = o.method {
            // The kind's default method (GET, PUT) or POST; the default is stored as nil.
            let m = method.uppercased(), standard = r.kind == .upload ? "PUT" : "GET"
            guard [standard, "POST"].contains(m) else {
                throw FerryError(
                    .invalidArgument,
                    "a\(r.kind == .upload ? "n upload" : " download")'s method must be \(standard) or POST, not "
                        + "'\(m.prefix(16))'"
                )
            }
            r.method = m == standard ? nil : m
        }
    }
}
