import ArgumentParser
import FerryBus
import FerryCore
import Foundation

struct Upload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue an upload of a file (HTTP PUT, or POST); prints the new task id.")

    @Argument(help: "The file to send.")
    var file: String
    @Argument(help: "The http or https URL to send it to.")
    var url: String
    @Option(help: "PUT (default) or POST.")
    var method: String?
    @Option(help: "Session to queue the task in (default: the CLI's own session).")
    var session: String?
    @Option(help: "A note stored with the task.")
    var description: String?
    @Flag(help: "Wait until the server took the whole file; exit 0 on success.")
    var wait = false

    func run() throws {
        let agent = try AgentConnection()
        var options: [String: Value] = [:]
        if let method { options["method"] = .string(method) }
        if let description { options["description"] = .string(description) }
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let id = try agent.createTask("CreateUpload", session: session, [.string(url), .string(path), .dict(options)])
        if wait { try Download.waitFor(id, agent: agent) }
    }
}
