import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The Python (PyGObject) and JavaScript (GJS) examples, run as a user would against the real
/// agent: they speak the D-Bus API directly, with no Swift in between.
@Suite(.serialized) struct OtherLanguageExamplesTests {
    enum Language: String, CaseIterable, CustomStringConvertible {
        case python, gjs
        var command: [String] {
            switch self {
            case .python: ["/usr/bin/python3", Harness.packageRoot + "/Examples/python/fetch-pdf.py"]
            case .gjs: ["/usr/bin/gjs", Harness.packageRoot + "/Examples/gjs/fetch-pdf.js"]
            }
        }
        var session: String { self == .python ? "dev.ferry.examples.FetchPDF.Python" : "dev.ferry.examples.FetchPDF.GJS" }
        var description: String { rawValue }
    }

    func pdf(_ h: Harness, _ name: String) throws -> Data {
        let pdf = Data("%PDF-1.4\n%\(name)\n".utf8) + (try h.makeFile("filler-" + name, size: 200_000))
        try pdf.write(to: URL(fileURLWithPath: h.www + "/" + name))
        return pdf
    }

    @Test(arguments: Language.allCases)
    func downloadsShowsProgressMovesAndOpens(_ language: Language) throws {
        let h = try Harness()
        let (env, opened) = try h.pdfOpenerDesktop()
        try h.startAgent(["--no-popups"], environment: env)
        try h.startFaultServer()
        let body = try pdf(h, "paper.pdf")
        let docs = h.root + "/Documents"
        try FileManager.default.createDirectory(atPath: docs, withIntermediateDirectories: true)
        try Data("an older paper".utf8).write(to: URL(fileURLWithPath: docs + "/paper.pdf"))
        let r = try h.run(
            language.command[0],
            Array(language.command.dropFirst()) + [h.faultURL("paper.pdf", "rate=400000"), "--documents", docs],
            environment: env)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("100% (\(body.count) of \(body.count) bytes)"), "\(r.stdout)")
        // Never over another file: the new one is "paper (1).pdf", and that is what was opened.
        #expect(try Data(contentsOf: URL(fileURLWithPath: docs + "/paper (1).pdf")) == body)
        #expect(try String(contentsOfFile: docs + "/paper.pdf", encoding: .utf8) == "an older paper")
        #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == docs + "/paper (1).pdf\n")
        // Every event was acknowledged.
        let info = try h.client().call("GetSession", [.string(language.session)]).first?.dictValue ?? [:]
        #expect(info["pending-events"] == .uint32(0), "\(info)")
    }

    @Test(arguments: Language.allCases)
    func aFailureIsSaid(_ language: Language) throws {
        let h = try Harness()
        try h.startAgent(["--no-popups"])
        try h.startFaultServer()
        let r = try h.run(
            language.command[0],
            Array(language.command.dropFirst()) + [h.faultURL("missing.pdf"), "--documents", h.root + "/Documents"])
        #expect(r.status == 1 && r.stderr.contains("404"), "\(r.stdout)\(r.stderr)")
        let refused = try h.run(language.command[0], Array(language.command.dropFirst()) + ["http://"])
        #expect(refused.status == 2 && refused.stderr.contains("InvalidURL"), "\(refused.stdout)\(refused.stderr)")
    }

    /// Killed mid-download, the app is started again by the agent and files the PDF away.
    @Test(arguments: Language.allCases)
    func killedMidDownloadItIsRelaunchedToFinish(_ language: Language) throws {
        let h = try Harness()
        try h.startAgent(["--no-popups", "--stall-timeout", "60"])
        try h.startFaultServer()
        let body = try pdf(h, "held.pdf")
        let docs = h.root + "/Documents"
        let app = try h.spawnWaitable(
            language.command[0],
            Array(language.command.dropFirst()) + [h.faultURL("held.pdf", "hold=50000"), "--documents", docs])
        defer { if app.isRunning { kill(app.processIdentifier, SIGKILL) } }
        let client = try h.client()
        func tasks() throws -> [TaskInfo] {
            try (try client.call("ListTasks", [.string(language.session), .uint64(0), .uint32(0)]).first?.arrayValue ?? [])
                .map { try TaskInfo(bus: $0.dictValue ?? [:]) }
        }
        try h.eventually("the held download") { try tasks().first?.received == 50_000 }
        kill(app.processIdentifier, SIGKILL)
        try h.waitForExit(app, "the app")

        try h.releaseHolds()
        try h.eventually("the relaunched app to finish handling", timeout: 60) {
            let info = try client.call("GetSession", [.string(language.session)]).first?.dictValue ?? [:]
            return (info["finished-events"]?.int64Value ?? 0) > 0
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: docs + "/held.pdf")) == body)
        #expect(h.agentLog.contains("session \(language.session): launched "), "\(h.agentLog)")
        let info = try client.call("GetSession", [.string(language.session)]).first?.dictValue ?? [:]
        #expect(info["pending-events"] == .uint32(0), "\(info)")
    }
}
