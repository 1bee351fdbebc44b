import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Turns a method's typed arguments (read by its type in FerryBus) into the core's requests:
/// the rules are `TaskDraft`'s (FerryCore); what they need from the machine (does a folder exist
/// and may it be written, a host name in IDNA, is an upload's file readable) is looked up here.
enum RequestDecoder {
    /// OpenSession's options; a default folder must exist and be writable.
    static func sessionOptions(_ o: SessionOptions) throws -> SessionOptions {
        if let dir = o.defaultDirectory, !Paths.isWritableDirectory(dir) {
            throw FerryError(.invalidDestination, "default-directory \(dir) does not exist or is not writable")
        }
        return o
    }

    /// The machine's answers the rules ask for.
    static let lookups = TaskDraft.Lookups(hostToASCII: Hostname.ascii, writableFolder: Paths.isWritableDirectory)

    static func download(url: String, _ o: TaskOptions) throws -> TaskRecord {
        try TaskDraft.download(url: url, o, lookups)
    }
    static func downloads(_ requests: [(url: String, options: TaskOptions)]) throws -> [TaskRecord] {
        try TaskDraft.downloads(requests, lookups)
    }
    static func upload(url: String, _ o: TaskOptions) throws -> TaskRecord {
        try TaskDraft.upload(url: url, o, lookups)
    }

    static func upload(url: String, file: String, _ options: TaskOptions) throws -> TaskRecord {
        var r = try upload(url: url, options)
        guard file.hasPrefix("/") else {
            throw FerryError(.invalidArgument, "the file to upload must be an absolute path: \(file)")
        }
        var st = stat()
        guard stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(file, R_OK) == 0 else {
            throw FerryError(.invalidArgument, "cannot upload \(file): not a readable regular file")
        }
        r.uploadFile = file
        r.expected = Int64(st.st_size)
        r.lastModified = UploadSource.stamp(st)  // a change before or while it is sent fails the task
        return r
    }

}
