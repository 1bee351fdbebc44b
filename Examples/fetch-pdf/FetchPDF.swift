// fetch-pdf: seed 000's app. Downloads one PDF through a background session, shows progress,
// lets the agent say "Download complete!" (popup and badge), moves the file into the documents
// folder under its own name, opens it with xdg-open and exits 0.
import ArgumentParser
import Ferry
import Foundation
import Synchronization

/// Opens the document with the user's viewer (UIDocumentInteractionController's part).
func open(_ file: URL) -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["xdg-open", file.path]
    do { try p.run() } catch { print("cannot run xdg-open: \(error)"); return 1 }
    p.waitUntilExit()
    return p.terminationStatus == 0 ? 0 : 1
}

/// Prints a line each time the percentage changes (the progress closure runs on the session's
/// threads, one call at a time).
final class ProgressLine: Sendable {
    private let lastPercent = Mutex(-1)

    func show(_ p: FerryProgress) {
        guard let total = p.total, total > 0 else { print("\(p.completed) bytes"); return }
        let percent = Int(p.completed * 100 / total)
        guard lastPercent.withLock({ old in defer { old = percent }; return old != percent }) else { return }
        print("\(percent)% (\(p.completed) of \(total) bytes)")
    }
}

@main
struct FetchPDF: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch-pdf",
        abstract: "Download a PDF in the background, then open it.")

    @Argument(help: "The PDF's http(s) URL.")
    var url: String

    @Option(help: "Folder the PDF is saved in (default: your documents folder).")
    var documents: String?

    func validate() throws {
        guard let u = URL(string: url), ["http", "https"].contains(u.scheme?.lowercased() ?? "") else {
            throw ValidationError("not an http(s) URL: \(url)")
        }
    }

    func run() async throws {
        let folder = documents.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FerryFiles.documentsDirectory
        var configuration = FerrySessionConfiguration.background(withIdentifier: "dev.ferry.examples.FetchPDF")
        // A PDF of an earlier run that finished after it quit lands here too.
        configuration.defaultDestination = folder
        let session = try FerrySession(configuration: configuration)
        defer { session.disconnect() }
        // An earlier run's events (its file, its end) are read and let go: the file then goes
        // to the default destination above.
        let earlier = Task { for await _ in session.events {} }
        defer { earlier.cancel() }
        let line = ProgressLine()
        let file: URL
        do {
            (file, _) = try await session.download(
                for: FerryRequest(url: URL(string: url)!), description: "fetch-pdf", into: folder,
                progress: { line.show($0) })
        } catch let error as FerryTaskError {
            FileHandle.standardError.write(Data("fetch-pdf: download failed: \(error.message)\n".utf8))
            throw ExitCode(1)
        }
        print("saved \(file.path)")
        throw ExitCode(open(file))
    }
}
