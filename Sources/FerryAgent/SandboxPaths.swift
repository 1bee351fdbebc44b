import FerryBus
import FerryCore
import FoundationEssentials

/// The paths in a sandboxed app's request must be ones its sandbox lets it write (destinations)
/// or read (uploads): its own folder or one its `filesystems=` grants. Checked on the resolved
/// path, so a symlink inside its folder cannot point the agent elsewhere.
enum SandboxPaths {
    static func check(_ request: AgentRequest, _ app: SandboxedApp) throws {
        switch request {
        case .openSession(_, let options, _):
            if let dir = options.defaultDirectory { try writable(dir, app, "default-directory") }
        case .createTasks(_, let drafts):
            for d in drafts {
                if let file = d.uploadFile {
                    guard let real = CallerIdentity.resolvedIfPossible(file), app.mayWrite(real) else {
                        throw FerryError(.accessDenied, "upload of \(file) refused: \(app.id) is sandboxed and may hand over only files in its own folders (\(app.writable.joined(separator: ", ")))")
                    }
                }
                if let dir = d.directory { try writable(dir, app, "directory") }
                if let out = d.output { try writable(PathName.folder(of: out), app, "output") }
            }
        case .createFromResumeData(_, _, let draft, _):
            if let dir = draft.directory { try writable(dir, app, "directory") }
            if let out = draft.output { try writable(PathName.folder(of: out), app, "output") }
        default:
            break
        }
    }

    private static func writable(_ folder: String, _ app: SandboxedApp, _ option: String) throws {
        guard let real = CallerIdentity.resolvedIfPossible(folder), app.mayWrite(real) else {
            throw FerryError(.accessDenied, "\(option) \(folder) refused: \(app.id) is sandboxed and may write only to \(app.writable.joined(separator: ", "))")
        }
    }
}
