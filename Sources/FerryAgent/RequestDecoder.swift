import FerryBus
import FerryCore
import Foundation
import Glibc

/// Turns D-Bus arguments (already type-checked by GDBus against the interface XML) into the
/// core's requests: option dictionaries become typed values, with clear errors naming what is
/// wrong. What needs the file system (does a folder exist and is it writable, is a file
/// readable) is checked here, so the core decides without I/O.
enum RequestDecoder {
    static let downloadOptions: Set<String> = ["directory", "output", "sha256", "description", "headers", "paused", "method"]
    static let uploadOptions: Set<String> = ["description", "headers", "paused", "method"]

    static func sessionOptions(_ options: [String: Value]) throws -> SessionOptions {
        var o = SessionOptions()
        if let v = options["launch-command"] { o.launchCommand = try strings(v, "launch-command") }
        if let v = options["discretionary"] { o.discretionary = try bool(v, "discretionary") }
        if let v = options["allow-metered"] { o.allowMetered = try bool(v, "allow-metered") }
        if let v = options["per-host-limit"] { o.perHostLimit = Int(try int(v, "per-host-limit")) }
        if let v = options["request-timeout"] { o.requestTimeout = Int(try int(v, "request-timeout")) }
        if let v = options["resource-timeout"] { o.resourceTimeout = Int(try int(v, "resource-timeout")) }
        if let v = options["popups"] { o.popups = try bool(v, "popups") }
        if let v = options["keep-events"] { o.keepEvents = try bool(v, "keep-events") }
        if let v = options["default-directory"] {
            let dir = try string(v, "default-directory")
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "default-directory \(dir) does not exist or is not writable")
            }
            o.defaultDirectory = dir
        }
        return o
    }

    /// A new download (its session, id and times are the core's to fill in).
    static func download(url: String, _ options: [String: Value]) throws -> TaskRecord {
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: "", url: url, host: host)
        for key in options.keys where !downloadOptions.contains(key) {
            throw FerryError(.invalidArgument, "unknown option '\(key)'")
        }
        if let v = options["directory"] {
            let dir = try string(v, "directory")
            guard dir.hasPrefix("/") else { throw FerryError(.invalidDestination, "directory must be an absolute path: \(dir)") }
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.directory = dir
        }
        if let v = options["output"] {
            guard r.directory == nil else { throw FerryError(.invalidArgument, "give either directory or output, not both") }
            let out = try string(v, "output")
            guard out.hasPrefix("/") else { throw FerryError(.invalidDestination, "output must be an absolute path: \(out)") }
            let name = (out as NSString).lastPathComponent
            guard FileNaming.sanitize(name) == name, !out.hasSuffix("/") else {
                throw FerryError(.invalidDestination, "output file name is not acceptable: \(out)")
            }
            let dir = (out as NSString).deletingLastPathComponent
            guard Paths.isWritableDirectory(dir) else {
                throw FerryError(.invalidDestination, "destination folder \(dir) does not exist or is not writable")
            }
            r.output = out
        }
        if let v = options["sha256"] {
            let hex = try string(v, "sha256").lowercased()
            guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else {
                throw FerryError(.invalidArgument, "sha256 must be 64 hexadecimal digits")
            }
            r.sha256 = hex
        }
        try common(&r, options)
        if let v = options["method"] {
            let m = try string(v, "method").uppercased()
            guard ["GET", "POST"].contains(m) else { throw FerryError(.invalidArgument, "a download's method must be GET or POST, not '\(m.prefix(16))'") }
            r.method = m == "GET" ? nil : m
        }
        return r
    }

    /// Several downloads, all or none; an error names the request it is about.
    static func downloads(_ requests: [(String, [String: Value])]) throws -> [TaskRecord] {
        guard requests.count <= AgentCore.maxBatch else {
            throw FerryError(.invalidArgument, "at most \(AgentCore.maxBatch) tasks per call")
        }
        var records: [TaskRecord] = []
        records.reserveCapacity(requests.count)
        for (index, (url, options)) in requests.enumerated() {
            do {
                records.append(try download(url: url, options))
            } catch var e as FerryError where requests.count > 1 {
                e.message = "request \(index + 1): \(e.message)"
                throw e
            }
        }
        return records
    }

    static func upload(url: String, file: String, _ options: [String: Value]) throws -> TaskRecord {
        let host = try DownloadURL.validate(url)
        var r = TaskRecord(session: "", url: url, host: host)
        r.kind = .upload
        for key in options.keys where !uploadOptions.contains(key) {
            throw FerryError(.invalidArgument, "unknown upload option '\(key)'")
        }
        guard file.hasPrefix("/") else { throw FerryError(.invalidArgument, "the file to upload must be an absolute path: \(file)") }
        var st = stat()
        guard stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(file, R_OK) == 0 else {
            throw FerryError(.invalidArgument, "cannot upload \(file): not a readable regular file")
        }
        r.uploadFile = file
        r.expected = Int64(st.st_size)
        try common(&r, options)
        if let v = options["method"] {
            let m = try string(v, "method").uppercased()
            guard ["PUT", "POST"].contains(m) else { throw FerryError(.invalidArgument, "an upload's method must be PUT or POST, not '\(m.prefix(16))'") }
            r.method = m == "PUT" ? nil : m
        }
        return r
    }

    /// Options downloads and uploads share.
    private static func common(_ r: inout TaskRecord, _ options: [String: Value]) throws {
        if let v = options["description"] {
            let d = try string(v, "description")
            guard d.utf8.count <= 4096 else { throw FerryError(.invalidArgument, "description longer than 4096 bytes") }
            r.description = d
        }
        if let v = options["headers"] {
            guard case .stringDict(let h) = v else { throw FerryError(.invalidArgument, "headers must be a{ss}") }
            for (k, value) in h {
                guard !k.isEmpty, k.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }),
                      !value.contains("\r"), !value.contains("\n") else {
                    throw FerryError(.invalidArgument, "invalid header '\(k.prefix(64))'")
                }
            }
            r.headers = h
        }
        if let v = options["paused"], try bool(v, "paused") { r.state = .paused }
    }

    static func challengeReply(_ answer: [String: Value]) throws -> ChallengeReply {
        for key in answer.keys where !["user", "password", "action"].contains(key) {
            throw FerryError(.invalidArgument, "unknown answer key '\(key)'")
        }
        if let action = answer["action"] {
            switch try string(action, "action") {
            case "reject": return .reject
            case "cancel": return .cancel
            case let other: throw FerryError(.invalidArgument, "action must be reject or cancel, not '\(other.prefix(32))'")
            }
        }
        guard let user = answer["user"]?.stringValue, let password = answer["password"]?.stringValue else {
            throw FerryError(.invalidArgument, "give user and password (strings), or action")
        }
        return .credential(Credential(user: user, password: password))
    }

    // MARK: - Values

    static func string(_ v: Value, _ key: String) throws -> String {
        guard let s = v.stringValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a string") }
        return s
    }
    static func bool(_ v: Value, _ key: String) throws -> Bool {
        guard let b = v.boolValue else { throw FerryError(.invalidArgument, "option '\(key)' must be a boolean") }
        return b
    }
    static func int(_ v: Value, _ key: String) throws -> Int64 {
        guard let i = v.int64Value, i >= 0 else { throw FerryError(.invalidArgument, "option '\(key)' must be a non-negative integer") }
        return i
    }
    static func strings(_ v: Value, _ key: String) throws -> [String] {
        guard case .strings(let s) = v else { throw FerryError(.invalidArgument, "option '\(key)' must be an array of strings") }
        return s
    }
}
