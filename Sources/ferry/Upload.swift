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
        let sessionID = session ?? AgentConnection.cliSession
        if session == nil { try agent.openCLISession() }
        var options: [String: Value] = [:]
        if let method { options["method"] = .string(method) }
        if let description { options["description"] = .string(description) }
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let id: Int64
        do {
            let reply = try agent.client.call("CreateUpload", [.string(sessionID), .string(url), .string(path), .dict(options)])
            id = reply.first?.int64Value ?? 0
        } catch let e as FerryError {
            Output.error(e.message)
            throw ExitCode(2)
        }
        print(id)
        fflush(stdout)
        if wait { try Download.waitFor(id, agent: agent) }
    }
}
