import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// desktop/dev.ferry.Agent1.xml is the contract: the running agent exports exactly its methods.
@Suite struct InterfaceContractTests {
    @Test func agentExportsTheInterfaceFromDesktopXML() throws {
        let h = try Harness()
        try h.startAgent()
        let xml = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.Agent1.xml", encoding: .utf8)
        let reply = try h.client().callRaw(destination: BusNames.agent, path: BusNames.path,
                                           interface: "org.freedesktop.DBus.Introspectable", method: "Introspect", args: [])
        let live = try #require(reply.first?.stringValue)
        func names(_ s: String, _ tag: String) -> [String] {
            s.components(separatedBy: "<\(tag) name=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }.sorted()
        }
        #expect(!names(xml, "method").isEmpty)
        #expect(names(live, "method").filter { names(xml, "method").contains($0) } == names(xml, "method"))
        #expect(names(live, "signal").filter { names(xml, "signal").contains($0) } == names(xml, "signal"))
    }

    /// What a D-Bus object answers besides its interface: the Version property (Get, GetAll, not
    /// writable), introspection of the paths above it, an error naming an unknown object or
    /// method, and a call with arguments of the wrong types refused before the agent sees it.
    @Test func theStandardInterfacesAnswerAsDBusSays() throws {
        let h = try Harness()
        try h.startAgent()
        let c = try h.client()
        func call(_ path: String, _ interface: String, _ method: String, _ args: [Value]) throws -> [Value] {
            try c.callRaw(destination: BusNames.agent, path: path, interface: interface, method: method, args: args)
        }
        func refused(_ path: String, _ interface: String, _ method: String, _ args: [Value], _ name: String) {
            do {
                _ = try call(path, interface, method, args)
                Issue.record("\(method) on \(path) answered")
            } catch { #expect("\(error)".contains(name), "\(error)") }
        }
        let properties = "org.freedesktop.DBus.Properties"
        // As gdbus prints it: one variant holding the string.
        let get = try h.run("/usr/bin/gdbus", ["call", "--session", "-d", BusNames.agent, "-o", BusNames.path,
                                                "-m", properties + ".Get", BusNames.interface, "Version"])
        #expect(get.stdout == "(<'\(FerryRelease.version)'>,)\n", "\(get.stdout) \(get.stderr)")
        let version = try h.run("/usr/bin/gdbus", ["call", "--session", "-d", BusNames.agent, "-o", BusNames.path,
                                                    "-m", BusNames.interface + ".GetVersion"])
        #expect(version.stdout == "('\(FerryRelease.version)',)\n", "\(version.stdout) \(version.stderr)")
        #expect(try call(BusNames.path, properties, "GetAll", [.string(BusNames.interface)])
                == [.dict(["Version": .string(FerryRelease.version)])])
        let set = try h.run("/usr/bin/gdbus", ["call", "--session", "-d", BusNames.agent, "-o", BusNames.path,
                                                "-m", properties + ".Set", BusNames.interface, "Version", "<'9'>"])
        #expect(set.stderr.contains("PropertyReadOnly"), "\(set.stdout) \(set.stderr)")
        refused(BusNames.path, properties, "Set", [.string(BusNames.interface), .string("Version"), .string("9")], "InvalidArgs")
        let root = try #require(try call("/", "org.freedesktop.DBus.Introspectable", "Introspect", []).first?.stringValue)
        #expect(root.contains("<node name=\"dev\"/>"), "\(root)")
        let parent = try #require(try call("/dev/ferry", "org.freedesktop.DBus.Introspectable", "Introspect", []).first?.stringValue)
        #expect(parent.contains("<node name=\"Agent1\"/>") && parent.contains("<node name=\"LauncherEntry\"/>"), "\(parent)")
        refused("/dev/ferry/Nothing", BusNames.interface, "GetStatus", [], "UnknownObject")
        refused(BusNames.path, BusNames.interface, "NoSuchMethod", [], "UnknownMethod")
        refused(BusNames.path, BusNames.interface, "GetTask", [.string("1")], "InvalidArgs")
        // Every object's every interface checks the types, not only dev.ferry.Agent1's.
        let launcher = "/dev/ferry/LauncherEntry", unity = "com.canonical.Unity.LauncherEntry"
        refused(launcher, unity, "Query", [.int32(1)], "InvalidArgs")
        refused(launcher, unity, "Query", [.array([.string("x")], elementType: "s")], "InvalidArgs")
        refused(launcher, properties, "GetAll", [], "InvalidArgs")
        refused(BusNames.path, properties, "Get", [.string(BusNames.interface)], "InvalidArgs")
        refused(BusNames.path, "org.freedesktop.DBus.Introspectable", "Introspect", [.string("x")], "InvalidArgs")
        refused(launcher, unity, "Update", [], "UnknownMethod")   // a signal, not a method
        #expect(try call(launcher, unity, "Query", []).first?.stringValue == "application://dev.ferry.Downloads.desktop")
        #expect(try call(launcher, properties, "GetAll", [.string(unity)]) == [.dict([:])])
        _ = try call(BusNames.path, "org.freedesktop.DBus.Peer", "Ping", [])
        if let machine = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) {
            #expect(try call(launcher, "org.freedesktop.DBus.Peer", "GetMachineId", []) == [.string(machine)])
        }
        #expect(try call(BusNames.path, BusNames.interface, "GetStatus", []).first?.dictValue?["version"] != nil)
        // Every method of every object, as each introspects itself, with one argument too many.
        var checked = 0
        for path in [BusNames.path, launcher, "/dev/ferry", "/"] {
            let xml = try #require(try call(path, "org.freedesktop.DBus.Introspectable", "Introspect", []).first?.stringValue)
            for interface in xml.components(separatedBy: "<interface name=\"").dropFirst() {
                let name = String(interface.prefix { $0 != "\"" })
                for method in interface.components(separatedBy: "<method name=\"").dropFirst() {
                    let body = method.components(separatedBy: "</method>").first ?? method
                    let inputs = body.components(separatedBy: "direction=\"in\"").count - 1
                    let member = String(method.prefix { $0 != "\"" })
                    refused(path, name, member, Array(repeating: .uint32(0), count: inputs + 1), "InvalidArgs")
                    checked += 1
                }
            }
        }
        #expect(checked > 30, "only \(checked) methods introspected")
    }

    /// The typed layer names exactly the XML's methods and signals, and clients call the agent
    /// only through it (no method or signal name spelled anywhere else).
    @Test func theTypedLayerIsTheXMLAndClientsUseIt() throws {
        let xml = try String(contentsOfFile: Harness.packageRoot + "/desktop/dev.ferry.Agent1.xml", encoding: .utf8)
        func names(_ tag: String) -> Set<String> {
            Set(xml.components(separatedBy: "<\(tag) name=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) })
        }
        #expect(Set(AgentMethod.allCases.map(\.rawValue)) == names("method"))
        #expect(Set(AgentSignal.allCases.map(\.rawValue)) == names("signal"))
        var spelled: [String] = []
        for dir in ["Sources", "Examples"] {
            let root = Harness.packageRoot + "/" + dir
            for case let file as String in FileManager.default.enumerator(atPath: root)! where file.hasSuffix(".swift") && !file.hasPrefix("FerryBus/API/") {
                let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
                // One-word names (Pause, Resume, Cancel) are also the window's button labels there.
                let words = file.hasPrefix("ferry-downloads/") ? names("method").filter { $0.dropFirst().contains(where: \.isUppercase) } : names("method")
                for name in words.union(names("signal")) where text.contains("\"\(name)\"") { spelled.append("\(file): \(name)") }
            }
        }
        #expect(spelled.isEmpty, "method names outside the typed layer: \(spelled)")
    }

    /// `ferry list --json` writes its text itself: it must be exactly what JSONSerialization
    /// gives for the same objects, escapes included.
    @Test func listJSONIsWhatJSONSerializationWrites() throws {
        let h = try Harness()
        try h.startAgent()
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Json"), .dict([:])])
        let tricky = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} é 日本 \u{2028}"
        for d in [tricky, "", "plain"] {
            _ = try c.call("CreateDownload", [.string("dev.ferry.test.Json"), .string("http://127.0.0.1:9/x?a=1&b=\"2\""),
                                              .dict(["paused": .bool(true), "description": .string(d)])])
        }
        let out = try h.ferry("list", "--json")
        #expect(out.status == 0)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        #expect(parsed.count == 3)
        #expect(parsed.first?["description"] as? String == tricky)
        let again = try JSONSerialization.data(withJSONObject: parsed, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        #expect(String(decoding: again, as: UTF8.self) + "\n" == out.stdout)
    }

    /// Pages are asked for ahead (the next while the caller handles this one): every task once,
    /// in order, and a caller that stops early stops there.
    @Test func pagesAskedForAheadArriveInOrderOnce() throws {
        let h = try Harness()
        try h.startAgent()
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Pages"), .dict([:])])
        let requests = (0..<10).map { Value.tuple([.string("http://127.0.0.1:9/p\($0)"), .dict(["paused": .bool(true)])]) }
        let ids = (try c.call("CreateDownloads", [.string("dev.ferry.test.Pages"), .array(requests, elementType: "(sa{sv})")])
            .first?.arrayValue ?? []).compactMap { $0.uint64Value.map(Int64.init) }
        let proxy = AgentProxy(c)
        var seen: [[Int64]] = []
        try proxy.forEachPage(session: "dev.ferry.test.Pages", pageSize: 3) { seen.append($0.map(\.id)); return true }
        #expect(seen == [Array(ids[0..<3]), Array(ids[3..<6]), Array(ids[6..<9]), [ids[9]]])
        var pages = 0
        try proxy.forEachPage(session: "dev.ferry.test.Pages", pageSize: 3) { _ in pages += 1; return pages < 2 }
        #expect(pages == 2)
    }

    /// ListTaskRows says exactly what ListTasks says, task by task.
    @Test func taskRowsAgreeWithTaskDictionaries() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("r.bin", size: 1_000)
        #expect(try h.ferry("download", h.faultURL("r.bin"), "--wait", "--description", "done one").status == 0)
        #expect(try h.ferry("download", h.faultURL("missing.bin"), "--wait").status != 0)
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Rows"), .dict([:])])
        _ = try c.call("CreateDownload", [.string("dev.ferry.test.Rows"), .string(h.faultURL("r.bin")), .dict(["paused": .bool(true)])])
        let dicts = try (try c.call("ListTasks", [.string(""), .uint64(0), .uint32(0)]).first?.arrayValue ?? []).map { try TaskInfo(bus: $0.dictValue ?? [:]) }
        let rows = try (try c.call("ListTaskRows", [.string(""), .uint64(0), .uint32(0)]).first?.arrayValue ?? []).compactMap { try TaskInfo(row: $0) }
        #expect(dicts.count == 3)
        #expect(rows == dicts)
        #expect(Set(rows.map(\.state)) == [.completed, .failed, .paused])
    }

    @Test func removingTasksKeepsFilesAndRefusesActiveOnes() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("keep.bin", size: 20_000)
        try h.makeFile("part.bin", size: 300_000)
        let done = try #require(Int64(try h.ferry("download", h.faultURL("keep.bin"), "--wait").stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let gone = try #require(Int64(try h.ferry("download", h.faultURL("missing.bin"), "--wait").stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        // A canceled task whose bytes were kept for resume data.
        let c = try h.client()
        let held = try #require(Int64(try h.ferry("download", h.faultURL("part.bin", "hold=100000")).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try h.eventually("bytes in staging") { (try h.show(held)["received"] as? Int) == 100_000 }
        _ = try c.call("CancelProducingResumeData", [.uint64(UInt64(held))])
        #expect(FileManager.default.fileExists(atPath: StateFolder(h.state).staged(held)))
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Rm"), .dict([:])])
        let paused = try #require(try c.call("CreateDownload", [.string("dev.ferry.test.Rm"), .string(h.faultURL("keep.bin")),
                                                                .dict(["paused": .bool(true)])]).first?.uint64Value.map(Int64.init))

        // An active task in the list refuses the whole call, naming it.
        do {
            _ = try c.call("RemoveTasks", [.array([.uint64(UInt64(done)), .uint64(UInt64(paused))], elementType: "t")])
            Issue.record("an active task was removed")
        } catch let e as FerryError {
            #expect(e.kind == .invalidState && e.message.contains("task \(paused)"), "\(e)")
        }
        #expect(try h.ferry("show", String(done)).status == 0)

        // Ended tasks go; the downloaded file stays; kept partial bytes are discarded.
        #expect(try h.ferry("remove", String(done), String(held)).status == 0)
        #expect(try h.ferry("show", String(done)).status != 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/keep.bin")) == data)
        #expect(!FileManager.default.fileExists(atPath: StateFolder(h.state).staged(held)))
        // Clear takes the rest of the ended ones (the failed download) and leaves the paused one.
        let cleared = try h.ferry("clear")
        #expect(cleared.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(cleared.stdout)")
        #expect(try h.ferry("show", String(gone)).status != 0)
        #expect(try h.show(paused)["state"] as? String == "paused")
        let counts = try #require(try c.call("GetStatus").first?.dictValue?["tasks"]?.dictValue)
        #expect(counts["completed"]?.int64Value == 0 && counts["failed"]?.int64Value == 0 && counts["paused"]?.int64Value == 1)
    }

    @Test func pauseAllAndResumeAllActOnEveryTaskOfTheirSession() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("a.bin", size: 200_000)
        // Three CLI downloads hold at 1,000 bytes; one of another session as well.
        let ids = try (0..<3).map { i in
            try #require(Int64(try h.ferry("download", h.faultURL("a.bin", "hold=1000&n=\(i)")).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Other"), .dict([:])])
        let other = try #require(try c.call("CreateDownload", [.string("dev.ferry.test.Other"), .string(h.faultURL("a.bin", "hold=1000")),
                                                               .dict([:])]).first?.int64Value)
        let paused = try h.ferry("pause", "--all", "--session", "dev.ferry.cli")
        #expect(paused.stdout.contains("paused 3 task(s)"), "\(paused.stdout) \(paused.stderr)")
        for id in ids { #expect(try h.show(id)["state"] as? String == "paused") }
        #expect(try h.show(other)["state"] as? String != "paused")
        #expect(try h.ferry("pause", "--session", "x").status != 0)   // --session needs --all
        let resumed = try h.ferry("resume", "--all")
        #expect(resumed.stdout.contains("resumed 3 task(s)"), "\(resumed.stdout)")
        for id in ids { #expect(try h.show(id)["state"] as? String != "paused") }
    }

    @Test func watchFollowsSignalsAndRemovalIsSignalled() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        try h.makeFile("w.bin", size: 5_000)
        let monitor = h.root + "/monitor.txt"
        try h.spawn("/usr/bin/dbus-monitor", ["--address", h.busAddress, "type='signal',member='TasksRemoved'"], output: monitor)
        // `ferry watch --exit-when-idle` leaves once the agent signals that the paused task it
        // shows has ended (it only polls running tasks' figures; this one is not running).
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.W"), .dict([:])])
        let id = try #require(try c.call("CreateDownload", [.string("dev.ferry.test.W"), .string(h.faultURL("w.bin")),
                                                            .dict(["paused": .bool(true)])]).first?.int64Value)
        let screen = h.root + "/watch.txt"
        let watch = try h.spawnWaitable(Harness.ferry, ["watch", "--session", "dev.ferry.test.W", "--exit-when-idle"], output: screen)
        // Its first screen comes after it subscribed to the signals.
        try h.eventually("ferry watch's first screen") {
            ((try? String(contentsOfFile: screen, encoding: .utf8)) ?? "").contains("paused")
        }
        #expect(watch.isRunning)
        _ = try c.call("Cancel", [.uint64(UInt64(id))])
        try h.waitForExit(watch, "ferry watch")
        #expect(watch.terminationStatus == 0)
        // Removing it from the list is signalled with its id.
        #expect(try h.ferry("remove", String(id)).status == 0)
        try h.eventually("TasksRemoved on the bus") {
            let text = (try? String(contentsOfFile: monitor, encoding: .utf8)) ?? ""
            return text.contains("member=TasksRemoved") && text.contains("uint64 \(id)")
        }
    }

    @Test func endedTasksLeaveTheListAfterTheRetentionTime() throws {
        let h = try Harness()
        try h.startFaultServer()
        try h.startAgent()
        let data = try h.makeFile("old.bin", size: 1_000)
        let id = try #require(Int64(try h.ferry("download", h.faultURL("old.bin"), "--wait").stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let c = try h.client()
        _ = try c.call("OpenSession", [.string("dev.ferry.test.Keep"), .dict([:])])
        let waiting = try #require(try c.call("CreateDownload", [.string("dev.ferry.test.Keep"), .string(h.faultURL("old.bin")),
                                                                 .dict(["paused": .bool(true)])]).first?.uint64Value)
        // Let the task's end be over a second in the past, then keep ended tasks for 0.86 s.
        let ended = try #require(try h.show(id)["updated"] as? Int)
        try h.eventually("a second passed") { Int(Date().timeIntervalSince1970) > ended + 1 }
        h.killAgent(signal: SIGTERM)
        try h.startAgent(["--keep-ended-days", "0.00001"])
        try h.eventually("the ended task left the list") { try h.ferry("show", String(id)).status != 0 }
        #expect(try h.show(Int64(waiting))["state"] as? String == "paused")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.downloads + "/old.bin")) == data)
        #expect(h.agentLog.contains("removed 1 task(s) that ended more than"))
    }

    /// ferryd's options are checked before anything starts: a mistyped level or a value out of
    /// range is refused naming the option, the value and what it may be.
    @Test func ferrydRefusesBadOptionsByName() throws {
        let h = try Harness()
        for (args, words) in [(["--log-level", "infoo"], "infoo"), (["--max-transfers", "0"], "--max-transfers 0: must be 1 to 1000"),
                              (["--retry-base-ms", "500", "--retry-cap-ms", "100"], "--retry-cap-ms 100: must be at least --retry-base-ms"),
                              (["--state-dir", "relative/dir"], "--state-dir relative/dir: must be an absolute path")] {
            let r = try h.run(Harness.ferryd, args)
            #expect(r.status == 64 && r.stderr.contains(words), "\(args): \(r.status) \(r.stderr)")
        }
    }
}