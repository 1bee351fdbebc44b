import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The agent starting an app for its events, and not starting a crashing one in a storm.
@Suite(.serialized) struct RelaunchTests {
    /// An app opens `session` with `launch` as its command, downloads `file`, and exits with the
    /// events unread. Returns the task id.
    func appLeavesWithEventsUnread(_ h: Harness, _ session: String, launch: [String], file: String) throws -> Int64 {
        let app = try h.client()
        _ = try app.call("OpenSession", [.string(session), .dict(["launch-command": .strings(launch)])])
        let id = try app.call("CreateDownload", [.string(session), .string(h.faultURL(file)), .dict([:])]).first?.int64Value ?? 0
        try h.eventually("the download") { (try h.show(id)["state"] as? String) == "completed" }
        app.close()
        return id
    }

    @Test func aCrashingAppIsRelaunchedWithBackoffAndShowSaysSo() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("f.bin", size: 1000)
        // The "app": records the session it was launched for, then crashes without handling anything.
        let launches = h.root + "/launches.txt"
        let script = h.root + "/crashing-app.sh"
        try "#!/bin/sh\necho \"$FERRY_BACKGROUND_SESSION\" >> \(launches)\nexit 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)

        let id = try appLeavesWithEventsUnread(h, "dev.ferry.test.Crashy", launch: [script], file: "f.bin")
        func lines() -> [String] {
            ((try? String(contentsOfFile: launches, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        try h.eventually("a first launch") { lines().count == 1 }
        #expect(lines() == ["dev.ferry.test.Crashy"])
        try h.eventually("the crash to be counted") {
            (try h.show(id)["relaunch"] as? String)?.contains("exited 1 time(s)") == true
        }
        let text = try h.ferry("show", String(id))
        #expect(text.stdout.contains("relaunch: app exited 1 time(s) without handling its events; next launch in"))
        // After the backoff it is tried again, and the next wait is longer.
        try h.eventually("a second launch", timeout: 20) { lines().count == 2 }
        try h.eventually("the second crash to be counted") {
            (try h.show(id)["relaunch"] as? String)?.contains("exited 2 time(s)") == true
        }
        #expect(lines().count == 2)   // no storm: the third waits ~4 s
        #expect(h.agentLog.contains("launched \(script)"))
    }

    @Test func aDesktopEntryIsLaunchedThroughGIO() throws {
        let h = try Harness()
        try h.startAgent()
        try h.startFaultServer()
        try h.makeFile("g.bin", size: 1000)
        let seen = h.root + "/seen.txt"
        let script = h.root + "/app.sh"
        try "#!/bin/sh\necho \"$FERRY_BACKGROUND_SESSION $1\" >> \(seen)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let entry = h.root + "/example-app.desktop"
        try "[Desktop Entry]\nType=Application\nName=Example\nExec=\(script) --from-desktop-entry\n"
            .write(toFile: entry, atomically: true, encoding: .utf8)
        _ = try appLeavesWithEventsUnread(h, "dev.ferry.test.Desktop", launch: [entry], file: "g.bin")
        try h.eventually("the desktop entry ran") {
            (try? String(contentsOfFile: seen, encoding: .utf8))?.hasPrefix("dev.ferry.test.Desktop --from-desktop-entry\n") == true
        }
    }
}
