// fetch-pdf: seed 000's app. Downloads one PDF through a background session, shows progress,
// lets the agent say "Download complete!" (popup and badge), moves the file into the documents
// folder under its own name, opens it with xdg-open and exits 0.
import ArgumentParser
import Ferry
import Foundation

/// The delegate: everything happens in callbacks, on the session's serial queue.
final class FetchDelegate: FerrySessionDelegate, @unchecked Sendable {
    let documents: URL
    var taskID: UInt64 = 0
    var lastPercent = -1
    var exitCode: Int32?
    let done = DispatchSemaphore(value: 0)
    var opened: URL?

    init(documents: URL) { self.documents = documents }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?) {
        guard downloadTask.taskIdentifier == taskID else { return }
        if let total = totalBytesExpectedToWrite, total > 0 {
            let percent = Int(totalBytesWritten * 100 / total)
            guard percent != lastPercent else { return }
            lastPercent = percent
            print("\(percent)% (\(totalBytesWritten) of \(total) bytes)")
        } else {
            print("\(totalBytesWritten) bytes")
        }
    }

    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didFinishDownloadingTo location: URL) {
        // The file is ours to move now; a file left here would go to the default destination.
        do {
            let file = try FerryFiles.move(location, into: documents)
            print("saved \(file.path)")
            if downloadTask.taskIdentifier == taskID { opened = file }
        } catch {
            print("cannot save \(location.lastPathComponent): \(error)")
        }
    }

    func urlSession(_ session: FerrySession, task: FerryTask, didCompleteWithError error: FerryTaskError?) {
        guard task.taskIdentifier == taskID else { return }
        if let error {
            FileHandle.standardError.write(Data("fetch-pdf: download failed: \(error.message)\n".utf8))
            exitCode = 1
        } else if let file = opened {
            exitCode = open(file)
        } else {
            exitCode = 1
        }
        done.signal()
    }

    /// Opens the document with the user's viewer (UIDocumentInteractionController's part).
    private func open(_ file: URL) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["xdg-open", file.path]
        do { try p.run() } catch { print("cannot run xdg-open: \(error)"); return 1 }
        p.waitUntilExit()
        return p.terminationStatus == 0 ? 0 : 1
    }
}

@main
struct FetchPDF: ParsableCommand {
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

    func run() throws {
        let folder = documents.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FerryFiles.documentsDirectory
        let delegate = FetchDelegate(documents: folder)
        let session = try FerrySession(configuration: .background(withIdentifier: "dev.ferry.examples.FetchPDF"),
                                       delegate: delegate)
        // The task is created before it starts, so the delegate knows its id first.
        let task = try session.downloadTask(with: URL(string: url)!, description: "fetch-pdf")
        delegate.taskID = task.taskIdentifier
        task.resume()
        delegate.done.wait()
        session.disconnect()
        throw ExitCode(delegate.exitCode ?? 1)
    }
}
