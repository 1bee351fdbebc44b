import ArgumentParser
import FerryBus
import FerryCore
import Foundation

struct Upload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue an upload of a file (HTTP PUT, or POST); prints the new task id.")

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
            let id = try agent.createTask(session: task.session) { try $0.createUpload(session: $1, url: url, file: path, options) }
            if task.wait { try Download.waitFor(id, agent: agent) }
        }
    }
}
