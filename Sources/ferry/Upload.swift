import ArgumentParser
import FerryBus
import FerryCore
import Foundation

struct Upload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue an upload of a file (HTTP PUT, or POST); prints the new task id.",
        discussion: """
            Examples:
              ferry upload report.pdf https://example.org/upload/report.pdf --wait
              ferry upload photo.jpg https://example.org/api/photos --method POST --max-rate 1M
            """)

    @Argument(help: "The file to send.", completion: .file())
    var file: String
    @Argument(help: "The http or https URL to send it to.")
    var url: String
    @Option(help: "PUT (default) or POST.", completion: .list(["PUT", "POST"]))
    var method: String?
    @OptionGroup var task: NewTaskOptions

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            var options = task.options
            options.method = method
            let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            let id = try agent.createTask(session: task.session, printID: !task.json) {
                try $0.createUpload(session: $1, url: url, file: path, options)
            }
            try task.follow(id, agent: agent)
        }
    }
}
