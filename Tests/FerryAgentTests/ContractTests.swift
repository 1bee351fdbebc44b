import FerryBus
import FerryCore
import Foundation
import Testing

/// The method and signal types in FerryBus (`Agent1`) are desktop/dev.ferry.Agent1.xml: every
/// method and signal has one, and what each writes has exactly the XML's types. Runs without
/// processes; the live agent's side is `InterfaceContractTests`.
@Suite struct ContractTests {
    /// name → (in types, out types), read from the XML.
    static func xml(_ tag: String) throws -> [String: (in: String, out: String)] {
        let text = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.Agent1.xml", encoding: .utf8)
        var out: [String: (in: String, out: String)] = [:]
        for block in text.components(separatedBy: "<\(tag) name=\"").dropFirst() {
            let name = String(block.prefix { $0 != "\"" })
            let body = block.components(separatedBy: "</\(tag)>")[0]
            var ins = "", outs = ""
            for arg in body.components(separatedBy: "<arg ").dropFirst() {
                let type = arg.components(separatedBy: "type=\"")[1].prefix { $0 != "\"" }
                if arg.contains("direction=\"out\"") { outs += type } else { ins += type }
            }
            out[name] = (ins, outs)
        }
        return out
    }

    struct Example {
        let method: AgentMethod
        let arguments: [Value]
        let reply: [Value]
        init<M: Agent1Method>(_ call: M, _ reply: M.Reply) {
            method = M.method; arguments = call.arguments; self.reply = M.reply.encode(reply)
        }
    }

    static let info = TaskInfo(TaskRecord(session: "s", url: "https://example.com/a", host: "example.com"))
    static let examples: [Example] = [
        Example(Agent1.OpenSession(identifier: "s", configuration: SessionOptions()),
                OpenedSession(identifier: "s", created: true, latestSeq: 0, inbox: "/i")),
        Example(Agent1.GetSession(session: "s"), SessionInfo(identifier: "s", configuration: SessionConfig(), clients: 0,
                                                             pendingEvents: 0, latestSeq: 0, relaunch: "", finishedEvents: 0)),
        Example(Agent1.InvalidateSession(session: "s", cancelTasks: true), ()),
        Example(Agent1.FinishedHandlingEvents(session: "s"), ()),
        Example(Agent1.FetchEvents(session: "s", afterSeq: 0, limit: 0),
                [FetchedEvent(QueuedEvent(seq: 1, task: 2, event: .completed(error: nil, errorName: nil, resumable: true)), resumeData: [1])]),
        Example(Agent1.AcknowledgeEvents(session: "s", upToSeq: 1), ()),
        Example(Agent1.ResetBadge(), ()),
        Example(Agent1.GetStatus(), AgentStatus(version: "1", store: "", pid: 1, tasks: [:], running: 0, badge: 0)),
        Example(Agent1.CreateDownload(session: "s", url: "u", options: TaskOptions()), 1),
        Example(Agent1.CreateDownloads(session: "s", requests: [("u", TaskOptions())]), [1, 2]),
        Example(Agent1.CreateDownloadFromResumeData(session: "s", resumeData: [1], options: TaskOptions()), 1),
        Example(Agent1.CreateUpload(session: "s", url: "u", file: "/f", options: TaskOptions()), 1),
        Example(Agent1.CreateUploadFromFd(session: "s", url: "u", fd: 0, options: TaskOptions()), 1),
        Example(Agent1.ListTasks(session: "", afterID: 0, limit: 0), [info]),
        Example(Agent1.ListTaskRows(session: "", afterID: 0, limit: 0), [info]),
        Example(Agent1.ListTaskRowsSection(session: "", section: .ended, offset: 0, limit: 0), [info]),
        Example(Agent1.GetTask(task: 1), info),
        Example(Agent1.Pause(task: 1), ()),
        Example(Agent1.Resume(task: 1), ()),
        Example(Agent1.Cancel(task: 1), ()),
        Example(Agent1.CancelProducingResumeData(task: 1), [1, 2]),
        Example(Agent1.SetURL(task: 1, url: "u"), true),
        Example(Agent1.AnswerChallenge(task: 1, answer: .reject), ()),
        Example(Agent1.RemoveTasks(ids: [1]), ()),
        Example(Agent1.ClearFinished(session: ""), 3),
        Example(Agent1.PauseAll(session: ""), 3),
        Example(Agent1.ResumeAll(session: ""), 3),
        Example(Agent1.GetVersion(), "1.0"),
    ]

    @Test func everyMethodTypeWritesTheXMLsTypes() throws {
        let methods = try Self.xml("method")
        #expect(Set(Self.examples.map(\.method.rawValue)) == Set(methods.keys))
        #expect(Set(AgentMethod.allCases.map(\.rawValue)) == Set(methods.keys))
        for e in Self.examples {
            let xml = try #require(methods[e.method.rawValue])
            #expect(e.arguments.map(\.typeString).joined() == xml.in, "\(e.method) arguments")
            #expect(e.reply.map(\.typeString).joined() == xml.out, "\(e.method) reply")
        }
    }

    @Test func everySignalTypeWritesTheXMLsTypes() throws {
        let signals = try Self.xml("signal")
        let examples: [(AgentSignal, [Value])] = [
            (Agent1.EventsAvailable.signal, Agent1.EventsAvailable(session: "s", latestSeq: 1).arguments),
            (Agent1.TaskChanged.signal, Agent1.TaskChanged(task: 1, state: .running).arguments),
            (Agent1.TasksRemoved.signal, Agent1.TasksRemoved(tasks: [1]).arguments),
            (Agent1.TasksProgressed.signal, Agent1.TasksProgressed(progress: [TaskProgress(task: 1, received: 2, expected: -1)]).arguments),
        ]
        #expect(Set(examples.map(\.0.rawValue)) == Set(signals.keys))
        for (signal, arguments) in examples {
            #expect(arguments.map(\.typeString).joined() == signals[signal.rawValue]?.in, "\(signal)")
        }
    }

    /// What one end writes the other reads back as it was.
    @Test func argumentsAndRepliesReadBackAsWritten() throws {
        let call = Agent1.CreateDownloads(session: "s", requests: [("u1", TaskOptions()), ("u2", {
            var o = TaskOptions(); o.sha256 = "ab"; o.paused = true; return o }())])
        let read = try Agent1.CreateDownloads(arguments: call.arguments)
        #expect(read.session == "s" && read.requests.map(\.url) == ["u1", "u2"] && read.requests[1].options == call.requests[1].options)
        let section = try Agent1.ListTaskRowsSection(arguments: Agent1.ListTaskRowsSection(session: "", section: .ended, offset: 4, limit: 9).arguments)
        #expect(section.section == .ended && section.offset == 4 && section.limit == 9)
        let rows = try Agent1.ListTaskRows.reply.decode(Agent1.ListTaskRows.reply.encode([Self.info]), method: .listTaskRows)
        #expect(rows == [Self.info])
        let signal = try #require(Agent1.TasksProgressed(signal: Agent1.TasksProgressed(progress: [TaskProgress(task: 3, received: 4, expected: 5)]).arguments))
        #expect(signal.progress == [TaskProgress(task: 3, received: 4, expected: 5)])
    }

    /// A value of the wrong type, a missing one or an unknown enumeration is refused by name.
    @Test func wrongArgumentsAreRefusedByName() throws {
        #expect(throws: FerryError.self) { try Agent1.GetTask(arguments: [.string("1")]) }
        #expect(throws: FerryError.self) { try Agent1.Pause(arguments: []) }
        #expect(throws: FerryError.self) { try Agent1.Pause(arguments: [.uint64(1), .uint64(2)]) }
        do {
            _ = try Agent1.ListTaskRowsSection(arguments: [.string(""), .string("middle"), .uint32(0), .uint32(0)])
            Issue.record("an unknown section was read")
        } catch let e as FerryError { #expect(e.message.contains("unknown section \"middle\"")) }
        do {
            _ = try Agent1.CreateDownloads(arguments: [.string("s"), .array([.tuple([.string("u"), .dict([:])]),
                                                                            .tuple([.string("u"), .dict(["bogus": .bool(true)])])],
                                                                           elementType: "(sa{sv})")])
            Issue.record("an unknown option was read")
        } catch let e as FerryError { #expect(e.message == "request 2: unknown option 'bogus'", "\(e.message)") }
        #expect(Agent1.TaskChanged(signal: [.uint64(1), .string("exploded")]) == nil)
    }
}
