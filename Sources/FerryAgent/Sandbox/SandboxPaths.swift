import FerryBus
import FerryCore
import FoundationEssentials

/// The paths in a sandboxed app's request must be ones its sandbox lets it write (destinations)
/// or read (uploads): its own folder or one its `filesystems=` grants. Each request names its
/// paths and what they are for (`CoreRequest.resolvingPaths`); here each is checked on the
/// resolved path, and the request goes on with the resolved paths: when the file is saved, days
/// later perhaps, its folder is opened along that exact path with no link allowed on the way
/// (`ConfinedFolder`), so a folder the app swaps for a link meanwhile leads nowhere.
enum SandboxPaths {
    /// The request with its paths resolved beneath what `app` may use, or an error naming the one refused.
    static func resolve<R: CoreRequest>(_ request: R, _ app: SandboxedApp) throws -> R {
        try request.resolvingPaths { path, use in
            switch use {
            case .read: try readable(path, app)
            case .writeFolder(let option): try writable(path, app, option)
            case .writeFile(let option):
                try writable(PathName.folder(of: path), app, option) + "/" + PathName.lastName(of: path)
            }
        }
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
