import FerryCore
import Foundation
import Testing

/// Header fields are checked as bytes: "\r\n" is one Character, which a String search for "\r"
/// does not find.
@Suite struct HeaderFieldTests {
    @Test func crlfIsFoundAsBytes() {
        #expect(!"v\r\nX".contains(Character("\r")), "the trap: a Character search misses the pair")
        for bad in ["v\r\nX", "v\rX", "v\nX", "v\u{0}X"] { #expect(!HeaderField.isValidValue(bad), "\(bad.utf8.map { $0 })") }
        #expect(HeaderField.isValidValue("bytes=0-, \"etag\"; ü"))
        #expect(HeaderField.isValidName("X-Token") && !HeaderField.isValidName("X A") && !HeaderField.isValidName("X:") && !HeaderField.isValidName(""))
    }
}

/// What a Flatpak's `.flatpak-info` grants, as Flatpak itself grants it.
@Suite struct SandboxedAppGrantTests {
    @Test func homeHidesOtherAppsAndTheNetworkIsAPermission() throws {
        let info = "[Application]\nname=org.example.App\n\n[Context]\nshared=ipc;\nfilesystems=home;\n"
        let app = try #require(SandboxedApp.flatpak(info: info, userHome: "/home/u", userDirs: [:]))
        #expect(!app.network)
        #expect(app.mayWrite("/home/u/Documents/a") && app.mayWrite("/home/u/.var/app/org.example.App/data/x"))
        #expect(!app.mayWrite("/home/u/.var/app/org.example.Other/cookies.sqlite"))
        #expect(!app.mayWrite("/home/u/.local/share/flatpak/overrides/global"))
        let networked = try #require(SandboxedApp.flatpak(info: info.replacingOccurrences(of: "shared=ipc;", with: "shared=network;ipc;"),
                                                          userHome: "/home/u", userDirs: [:]))
        #expect(networked.network)
    }

    /// Paths compare as bytes: a Unicode-equivalent spelling of a granted folder is another
    /// folder on disk, not the granted one.
    @Test func grantsCompareBytes() {
        let app = SandboxedApp(id: "org.example.App", kind: .flatpak, home: "/home/u/.var/app/org.example.App",
                               writable: ["/home/u/.var/app/org.example.App", "/home/u/Caf\u{E9}"])
        #expect(app.mayWrite("/home/u/Caf\u{E9}/a"))
        #expect(!app.mayWrite("/home/u/Cafe\u{301}/a"), "canonically equivalent, but another folder")
    }
}

/// The start time read from /proc/PID/stat, and what it says about a connection's pid.
@Suite struct ProcessAgeTests {
    @Test func startTimeIsField22CountedAfterTheName() {
        let plain = "12540 (cat) R 12537 12537 4105 0 -1 4194304 123 0 0 0 0 0 0 0 20 0 1 0 898809 3133440 386"
        #expect(ProcessAge.startTicks(stat: plain) == 898_809)
        // A name with spaces and parentheses ("a) R 1 2") must not shift the fields.
        let tricky = "7 (a) R 1 2 3) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 10 10"
        #expect(ProcessAge.startTicks(stat: tricky) == 4242)
        #expect(ProcessAge.startTicks(stat: "7 (cut) R 1 2") == nil)
        #expect(ProcessAge.startTicks(stat: "no name here") == nil)
    }

    @Test func aProcessYoungerThanTheConnectionDidNotOpenIt() {
        #expect(ProcessAge.mayHaveOpened(startedAt: 100, connectionSeenAt: 100), "same tick: cannot tell, so trusted")
        #expect(ProcessAge.mayHaveOpened(startedAt: 99, connectionSeenAt: 100))
        #expect(!ProcessAge.mayHaveOpened(startedAt: 101, connectionSeenAt: 100))
    }
}
