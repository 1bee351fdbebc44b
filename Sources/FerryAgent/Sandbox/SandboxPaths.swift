import FerryBus
import FerryCore
import FoundationEssentials

/// The paths in a sandboxed app's request must be ones its sandbox lets it write (destinations)
/// or read (uploads): its own folder or one its `filesystems=` grants. Checked on the resolved
/// path, and the request goes on with the resolved paths: when the file is saved, days later
/// perhaps, its folder is opened along that exact path with no link allowed on the way
/// (`ConfinedFolder`), so a folder the app swaps for a link meanwhile leads nowhere.
enum SandboxPaths {
    static func resolve(_ request: AgentRequest, _ app: SandboxedApp) throws -> AgentRequest {
        switch request {
        case .openSession(let id, var options, let peer):
            if let dir = options.defaultDirectory {
                options.defaultDirectory = try writable(dir, app, "default-directory")
            }
            return .openSession(id, options, peer: peer)
        case .createTasks(let session, let drafts):
            return .createTasks(session: session, try drafts.map { try resolved($0, app) })
        case .createFromResumeData(let session, let data, let draft, let given):
            return .createFromResumeData(session: session, data, try resolved(draft, app), destinationGiven: given)
        // Every other request carries no path, each named: a new one must be sorted here, or the
        // agent does not build (no `default`).
        case .listTasks, .listSection, .getTask, .pause, .resume, .cancel, .cancelProducingResumeData,
            .answerChallenge, .finishedHandlingEvents, .invalidateSession, .getSession, .fetchEvents,
            .acknowledgeEvents, .resetBadge, .removeTasks, .clearFinished, .pauseAll, .resumeAll, .status:
            return request
        case .sandboxed:
            throw FerryError(.accessDenied, "nested sandbox request")
        }
    }

    private static func resolved(_ draft: TaskRecord, _ app: SandboxedApp) throws -> TaskRecord {
        var d = draft
        if let file = d.uploadFile { d.uploadFile = try readable(file, app) }
        if let dir = d.directory { d.directory = try writable(dir, app, "directory") }
        if let out = d.output {
            d.output = try writable(PathName.folder(of: out), app, "output") + "/" + PathName.lastName(of: out)
        }
        return d
    }

    /// The file to upload resolved, if it lies in the app's folders.
    static func readable(_ file: String, _ app: SandboxedApp) throws -> String {
        guard let real = CallerIdentity.resolvedIfPossible(file), app.mayWrite(real) else {
            throw FerryError(
                .accessDenied,
                "upload of \(file) refused: \(app.id) is sandboxed and may hand over only files in its own folders "
                    + "(\(app.writable.joined(separator: ", ")))"
            )
        }
        return real
    }

    /// The folder resolved, if the app may write there.
    private static func writable(_ folder: String, _ app: SandboxedApp, _ option: String) throws -> String {
        guard let real = CallerIdentity.resolvedIfPossible(folder), app.mayWrite(real) else {
            throw FerryError(
                .accessDenied,
                "\(option) \(folder) refused: \(app.id) is sandboxed and may write only to "
                    + "\(app.writable.joined(separator: ", "))"
            )
        }
        return real
    }
}
