import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

struct Upload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue an upload of a file (HTTP PUT, or POST); prints the new task id.",
        discussion: """
            Examples:
              ferry upload report.pdf https://example.org/upload/report.pdf --wait
              ferry upload photo.jpg https://example.org/photos --method POST
              ferry upload a.jpg https://example.org/photos --wait --reply reply.json

            With --wait, the server's reply (its response body, up to 1 MiB) follows the task id on standard output, \
            or goes to the file --reply names; its HTTP status goes to standard error.
            """)

    @Argument(help: "The file to send.", completion: .file())
    var file: String
    @Argument(help: "The http or https URL to send it to.")
    var url: String
    @Option(help: "PUT (default) or POST.", completion: .list(["PUT", "POST"]))
    var method: String?
    @Option(
        help:
            ArgumentHelp(
                "auto (default: ask the server, OPTIONS), tus (tus 1.0) or ietf (the IETF draft Resumable Uploads for "
                    + "HTTP): an interrupted upload sends only the rest; none: one plain request."),
        completion: .list(["auto", "tus", "ietf", "none"]))
    var resumable: String?
    @Option(help: "With --wait, write the server's reply to this file instead of standard output.", completion: .file())
    var reply: String?
    @OptionGroup var task: NewTaskOptions

    func run() throws {
        try reportingErrors {
            if !url.contains("://"), file.contains("://") {
                throw Refusal("'\(url)' is not a URL and '\(file)' is: the file comes first (ferry upload FILE URL)")
            }
            let agent = try AgentConnection()
            var options = task.options
            options.method = method
            options.resumable = resumable
            let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            let id = try agent.createTask(session: task.session, printID: !task.json) {
                try $0.createUpload(session: $1, url: url, file: path, options: options)
            }
            try task.follow(id, agent: agent)
            if task.wait { try deliverReply(of: id, agent: agent) }
        }
    }

    /// The server's answer to a finished upload: its status on stderr, its body to stdout or `--reply`.
    private func deliverReply(of id: Int64, agent: AgentConnection) throws {
        let t = try agent.task(id)
        guard let status = t.replyStatus else { return }
        let body = t.replyFile.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
        Output.error("the server answered HTTP \(status) (\(body.count) bytes\(t.replyCut ? ", cut at 1 MiB" : ""))")
        if let reply {
            if let message = Self.write(body, to: reply) {
                Output.error("cannot write the reply to \(reply): \(message)")
                throw ExitCode(1)
            }
        } else if !task.json {
            _ = body.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stdout) }
        }
    }

    /// The reply's bytes into a file of the user's (made or replaced); nil, or why not.
    private static func write(_ body: Data, to path: String) -> String? {
        guard let file = fopen(path, "w") else { return String(cString: strerror(errno)) }
        let written = body.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let failed = written != body.count ? errno : 0
        if fclose(file) != 0 || failed != 0 { return String(cString: strerror(failed != 0 ? failed : errno)) }
        return nil
    }
}
