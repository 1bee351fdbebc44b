import FerryBus
import FerryCore
import Foundation
import Glibc
import Testing

/// The agent starting an app for its events, and not starting a crashing one in a storm.
@Suite(.serialized) struct RelaunchTests {
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

        var id: UInt64 = 0
        do {
            let app = try h.client()
            _ = try app.call("OpenSession", [.string("dev.ferry.test.Crashy"), .dict(["launch-command": .strings([script])])])
            id = try app.call("CreateDownload", [.string("dev.ferry.test.Crashy"), .string(h.faultURL("f.bin")), .dict([:])])
                .first?.uint64Value ?? 0
            try h.eventually("the download") { (try h.show(Int64(id))["state"] as? String) == "completed" }
            app.close()   // the app exits with its events unread
        }
        func lines() -> [String] {
            ((try? String(contentsOfFile: launches, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        try h.eventually("a first launch") { lines().count == 1 }
        #expect(lines() == ["dev.ferry.test.Crashy"])
        try h.eventually("the crash to be counted") {
            (try h.show(Int64(id))["relaunch"] as? String)?.contains("exited 1 time(s)") == true
        }
        let text = try h.ferry("show", String(id))
        #expect(text.stdout.contains("relaunch: app exited 1 time(s) without handling its events; next launch in"))
        // After the backoff it is tried again, and the next wait is longer.
        try h.eventually("a second launch", timeout: 20) { lines().count == 2 }
        try h.eventually("the second crash to be counted") {
            (try h.show(Int64(id))["relaunch"] as? String)?.contains("exited 2 time(s)") == true
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
        let app = try h.client()
        _ = try app.call("OpenSession", [.string("dev.ferry.test.Desktop"), .dict(["launch-command": .strings([entry])])])
        let id = try app.call("CreateDownload", [.string("dev.ferry.test.Desktop"), .string(h.faultURL("g.bin")), .dict([:])])
            .first?.uint64Value ?? 0
        try h.eventually("the download") { (try h.show(Int64(id))["state"] as? String) == "completed" }
        app.close()
        try h.eventually("the desktop entry ran") {
            (try? String(contentsOfFile: seen, encoding: .utf8))?.hasPrefix("dev.ferry.test.Desktop --from-desktop-entry\n") == true
        }
    }
}
