import ArgumentParser
import FerryBus
import FerryCore
import FoundationEssentials
import Glibc

/// Answers a task's credentials challenge (reason `credentials`): a proxy that wants a user
/// and password (HTTP 407), for the user's own downloads. The password is read from the
/// terminal without echo, or from stdin's first line when it is not a terminal; never an argument.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give the user and password a task waits for (a proxy's 407).",
        discussion: "The password is asked for without echo, or read from standard input's first line.")
    @Argument(help: "Task id.", completion: TaskIDCompletion.active) var id: Int64
    @Option(help: "User name (asked for when not given).") var user: String?
    func validate() throws { try TaskIDs.check([id]) }

    func run() throws {
        try reportingErrors {
            let agent = try AgentConnection()
            let name = try user ?? Self.line(prompt: "User for task \(id): ", echo: true)
            let password = try Self.line(prompt: "Password: ", echo: false)
            try agent.api.answerChallenge(task: id, answer: .credential(Credential(user: name, password: password)))
        }
    }

    /// A line from the terminal (`echo` off: the password), else stdin's next line.
    static func line(prompt: String, echo: Bool) throws -> String {
        guard isatty(0) == 1 else {
            guard let text = readLine(strippingNewline: true) else {
                throw ValidationError("nothing on standard input")
            }
            return text
        }
        Output.toStderr(prompt)
        var saved = termios()
        tcgetattr(0, &saved)
        if !echo {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSANOW, &quiet)
        }
        defer {
            if !echo { tcsetattr(0, TCSANOW, &saved); Output.toStderr("\n") }
        }
        return readLine(strippingNewline: true) ?? ""
    }
}
