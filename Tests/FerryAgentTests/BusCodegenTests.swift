import FerryBus
import FerryCore
import Foundation
import Testing

/// The generator of the bus layer (ferry-bus-codegen, run at build time on
/// desktop/dev.ferry.Agent1.xml): what it refuses, and that the XML's annotations choose how an
/// argument is read.
@Suite struct BusCodegenTests {
    static var tool: String { Harness.buildDirectory + "/ferry-bus-codegen" }

    func generate(_ interfaceBody: String) throws -> (status: Int32, stderr: String, source: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let xml = dir.appendingPathComponent("i.xml"), out = dir.appendingPathComponent("out.swift")
        try "<node><interface name=\"dev.ferry.Agent1\">\(interfaceBody)</interface></node>".write(to: xml, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.tool)
        p.arguments = [xml.path, out.path]
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text, (try? String(contentsOf: out, encoding: .utf8)) ?? "")
    }

    /// A dictionary, struct or array argument has no meaning the generator may guess.
    @Test func anArgumentWithoutATypeItCanNameStopsTheBuild() throws {
        let r = try generate(#"<method name="Frob"><arg name="options" type="a{sv}" direction="in"/></method>"#)
        #expect(r.status == 1)
        #expect(r.stderr.contains("Frob, argument options (a{sv})"), "\(r.stderr)")
        #expect(r.source.isEmpty)
        let half = try generate(#"""
            <method name="Frob"><arg name="options" type="a{sv}" direction="in">
            <annotation name="dev.ferry.Swift.Type" value="TaskOptions"/></arg></method>
            """#)
        #expect(half.status == 1 && half.stderr.contains("needs dev.ferry.Swift.Codec"), "\(half.stderr)")
    }

    /// Plain signatures need nothing; names follow the XML's (after_id: afterID); an h argument's
    /// call sends the descriptor along.
    @Test func plainArgumentsNeedNoAnnotation() throws {
        let r = try generate(#"""
            <method name="GetThing"><arg name="after_id" type="t" direction="in"/><arg name="fd" type="h" direction="in"/>
            <arg name="count" type="u" direction="out"/></method>
            """#)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.source.contains("public var afterID: UInt64"))
        #expect(r.source.contains("func getThing(_ call: Agent1.GetThing, _ context: CallContext) throws -> Int"))
        #expect(r.source.contains("AgentCall(Agent1.GetThing(afterID: afterID, fd: 0), fds: [fd])"))
    }

    /// CreateUpload's options are annotated with the upload codec: a download's option is
    /// refused there by name, and taken by CreateDownload.
    @Test func theAnnotatedCodecReadsTheArgument() throws {
        let options: Value = .dict(["sha256": .string("ab")])
        do {
            _ = try Agent1.CreateUpload(arguments: [.string("s"), .string("https://h/u"), .string("/f"), options])
            Issue.record("an upload took sha256")
        } catch let e as FerryError { #expect(e.message == "unknown upload option 'sha256'", "\(e.message)") }
        let download = try Agent1.CreateDownload(arguments: [.string("s"), .string("https://h/u"), options])
        #expect(download.options.sha256 == "ab")
    }

    /// The dictionaries the agent writes carry the XML's keys (dev.ferry.Swift.Keys), each of its
    /// type; one without a key the XML says is always sent, or with a key of another type, is
    /// refused by name (no reader fills in a default).
    @Test func dictionariesCarryTheXMLsKeysAndNoDefaults() throws {
        var info = ContractTests.info
        info.replyStatus = 201; info.replyFile = "/inbox/r"; info.replyHeaders = ["etag": "x"]; info.priority = 0.9
        let d = info.dictionary
        for k in TaskInfo.Key.allCases where k.required { #expect(d[k.rawValue]?.typeString == k.signature, "\(k)") }
        for (name, v) in d {
            let k = try #require(TaskInfo.Key(rawValue: name), "\(name) is not in the XML")
            #expect(v.typeString == k.signature, "\(name)")
        }
        #expect(try TaskInfo(bus: d) == info)
        func refused(_ body: () throws -> Void, _ message: String) {
            do { try body(); Issue.record("read: \(message)") } catch let e as FerryError { #expect(e.message == message) } catch {
                Issue.record("\(error)")
            }
        }
        var missing = d; missing["received"] = nil
        refused({ _ = try TaskInfo(bus: missing) }, "a task: 'received' is missing")
        var wrong = d; wrong["attempts"] = .string("3")
        refused({ _ = try TaskInfo(bus: wrong) }, "a task: 'attempts' must be u, not s")

        let status = AgentStatus(version: "1", store: "/s", pid: 2, tasks: [.queued: 3], running: 1, badge: 4)
        let read = try AgentStatus(bus: status.bus)
        #expect(read.tasks[.queued] == 3 && read.badge == 4 && read.pid == 2)
        var noBadge = status.bus; noBadge["badge"] = nil
        refused({ _ = try AgentStatus(bus: noBadge) }, "the agent's status: 'badge' is missing")
        let opened = OpenedSession(identifier: "s", created: true, latestSeq: 9, inbox: "/i")
        #expect(try OpenedSession(bus: opened.bus) == opened)
        var noInbox = opened.bus; noInbox["inbox"] = nil
        refused({ _ = try OpenedSession(bus: noInbox) }, "the opened session: 'inbox' is missing")
    }

    /// An event's data carries every key the XML lists for its kind, each of its type; one
    /// without a key, or with a key of another type, is refused by name, and each kind comes
    /// back as it went.
    @Test func eventsCarryTheirKeysAndNoDefaults() throws {
        let events: [SessionEvent] = [
            .progress(received: 1, expected: nil, written: 1), .sent(sent: 2, expected: 9, written: 2),
            .challenge(scheme: "Basic", realm: "r", host: "h", previousFailures: 1, proxy: true),
            .challenge(scheme: "Basic", realm: "r", host: "h", previousFailures: 0, proxy: false),
            .invalidated(error: "gone"), .resumed(offset: 3, expected: nil), .finished(file: "/f", received: 4),
            .uploaded(sent: 5, replyFile: "/r", status: 201, cut: true, headers: ["etag": "x"]),
            .completed(error: nil, errorName: nil, resumable: false),
        ]
        for e in events {
            let read = try SessionEvent(kind: e.kind, data: e.data)
            #expect(read == e, "\(e.kind)")
        }
        func refused(_ kind: String, _ data: [String: Value], _ message: String) {
            do { _ = try SessionEvent(kind: kind, data: data); Issue.record("read: \(message)") } catch let e as FerryError {
                #expect(e.message == message)
            } catch { Issue.record("\(error)") }
        }
        var progress = SessionEvent.progress(received: 1, expected: 2, written: 1).data
        progress["written"] = nil
        refused("progress", progress, "a progress event: 'written' is missing")
        var completed = SessionEvent.completed(error: nil, errorName: nil, resumable: true).data
        completed["resumable"] = .string("yes")
        refused("completed", completed, "a completed event: 'resumable' must be b, not s")
        #expect(try SessionEvent(kind: "a-newer-kind", data: [:]) == nil, "a kind this client does not know")
    }

    /// What other languages read: the XML's dev.ferry.Event.<kind> annotations name every key an
    /// event of that kind carries, with its type, and mark the ones that may be absent.
    @Test func theXMLsEventAnnotationsListEveryKeyTheAgentSends() throws {
        let xml = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.Agent1.xml", encoding: .utf8)
        var listed: [String: [String: (signature: String, required: Bool)]] = [:]
        let pattern = #/<annotation name="dev\.ferry\.Event\.([a-z-]+)" value="([^"]*)"/>/#
        for m in xml.matches(of: pattern) {
            listed[String(m.1)] = Dictionary(
                uniqueKeysWithValues: m.2.split(separator: " ").map { item in
                    let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
                    let optional = parts[1].hasSuffix("?")
                    return (parts[0], (optional ? String(parts[1].dropLast()) : parts[1], !optional))
                })
        }
        let events: [FetchedEvent] = [
            .init(.init(seq: 1, task: 1, event: .progress(received: 1, expected: nil, written: 1))),
            .init(.init(seq: 2, task: 1, event: .sent(sent: 2, expected: 9, written: 2))),
            .init(.init(seq: 3, task: 1, event: .challenge(scheme: "Basic", realm: "r", host: "h", previousFailures: 1, proxy: true))),
            .init(.init(seq: 4, task: 0, event: .invalidated(error: nil))),
            .init(.init(seq: 5, task: 1, event: .resumed(offset: 3, expected: 7))),
            .init(.init(seq: 6, task: 1, event: .finished(file: "/f", received: 4))),
            .init(.init(seq: 7, task: 2, event: .uploaded(sent: 5, replyFile: "/r", status: 201, cut: true, headers: [:]))),
            .init(.init(seq: 8, task: 1, event: .completed(error: "x", errorName: "Failed", resumable: true)), resumeData: [1, 2]),
        ]
        #expect(Set(listed.keys) == Set(events.map(\.queued.event.kind)), "every kind annotated, and only those")
        #expect(Set(listed.keys) == Set(EventKind.allCases.map(\.rawValue)), "the generated kinds are the XML's")
        for e in events {
            let kind = e.queued.event.kind
            guard let keys = listed[kind], let data = e.bus.tupleValue?[3].dictValue else {
                Issue.record("\(kind): no annotation or no data"); continue
            }
            for (key, value) in data {
                #expect(keys[key]?.signature == value.typeString, "\(kind): '\(key)' is \(value.typeString)")
            }
            for (key, k) in keys where k.required { #expect(data[key] != nil, "\(kind): '\(key)' is always there") }
        }
    }
}
