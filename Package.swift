// swift-tools-version:6.0
import PackageDescription

// Ferry: background transfers for the Linux desktop.
// C libraries come in through system-library targets (one per library) and one
// small shim for the variadic/macro APIs Swift cannot call.
let agentSwift: [SwiftSetting] = [.swiftLanguageMode(.v5)]

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "ferryd", targets: ["ferryd"]),
        .executable(name: "ferry", targets: ["ferry"]),
        .executable(name: "ferry-downloads", targets: ["ferry-downloads"]),
        .executable(name: "ferry-browser-host", targets: ["ferry-browser-host"]),
        // The one library apps use. The agent's shell (FerryAgent) is no product: only ferryd and
        // this package's tests build on it, and they name the target.
        .library(name: "Ferry", targets: ["Ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(name: "CGLib", path: "Sources/CGLib", pkgConfig: "gio-unix-2.0",
                       providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CNotify", path: "Sources/CNotify", pkgConfig: "libnotify",
                       providers: [.apt(["libnotify-dev"])]),
        // GTK 4 with libadwaita (GNOME's widgets and styles): one module, as adwaita.h includes gtk.h.
        .systemLibrary(name: "CGtk", path: "Sources/CGtk", pkgConfig: "libadwaita-1",
                       providers: [.apt(["libgtk-4-dev", "libadwaita-1-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSecret", path: "Sources/CSecret", pkgConfig: "libsecret-1",
                       providers: [.apt(["libsecret-1-dev"])]),
        .target(name: "CFerryShim", dependencies: ["CGLib", "CCurl"], path: "Sources/CFerryShim"),

        // Pure decisions: no C, no I/O.
        .target(name: "FerryCore", path: "Sources/FerryCore"),
        // What agent, library and CLI share: the typed D-Bus API (API/), GVariant values, the bus
        // connection, and one of each system helper (Shared/: XDG paths, the no-overwrite move,
        // the process launcher, the box for C callbacks).
        // Its method and signal types, handler protocol and client calls are generated from
        // desktop/dev.ferry.Agent1.xml at build time (ferry-bus-codegen, run by BusCodegen).
        .target(name: "FerryBus", dependencies: ["CGLib", "CFerryShim", "FerryCore"],
                path: "Sources/FerryBus", swiftSettings: agentSwift, plugins: ["BusCodegen"]),
        // No unsafe flags anywhere in the library's closure: SwiftPM refuses such a package as a
        // versioned dependency. (The .deb's build finds this tool's runtime: debian/rules.)
        .executableTarget(name: "ferry-bus-codegen", dependencies: ["CGLib"], path: "Sources/ferry-bus-codegen",
                          swiftSettings: agentSwift),
        .plugin(name: "BusCodegen", capability: .buildTool(), dependencies: ["ferry-bus-codegen"], path: "Plugins/BusCodegen"),
        // sd-bus messages read into and written from `Value`s straight in D-Bus's wire format (GDBus
        // builds and frees a GVariant for every value): the agent's bus, and the CLI's long listings.
        .target(name: "FerrySDBus", dependencies: ["CSystemd", "FerryBus", "FerryCore"], path: "Sources/FerrySDBus",
                swiftSettings: agentSwift),
        // The agent's I/O shell: curl, SQLite, sd-bus, all on one GLib main loop.
        .target(name: "FerryAgent",
                dependencies: ["FerryCore", "FerryBus", "FerrySDBus", "CGLib", "CCurl", "CNotify", "CSQLite", "CSystemd", "CSecret", "CFerryShim",
                               .product(name: "Logging", package: "swift-log")],
                path: "Sources/FerryAgent", swiftSettings: agentSwift),
        .executableTarget(name: "ferryd", dependencies: ["FerryAgent",
                          .product(name: "ArgumentParser", package: "swift-argument-parser")], path: "Sources/ferryd",
                          swiftSettings: agentSwift),
        // The client library apps use (NSURLSession-shaped); Swift 6 language mode.
        .target(name: "Ferry", dependencies: ["FerryBus", "FerryCore", "CGLib"], path: "Sources/Ferry"),
        // The browser extension's native messaging host (browser/): stdin and stdout, no GTK.
        .executableTarget(name: "ferry-browser-host", dependencies: ["FerryBus", "FerryCore"],
                          path: "Sources/ferry-browser-host", swiftSettings: agentSwift),
        .executableTarget(name: "ferry",
                          dependencies: ["FerryBus", "FerryCore", "FerrySDBus", "CGLib",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          path: "Sources/ferry", swiftSettings: agentSwift),
        // The Downloads window (GTK 4), started by `ferry view` on a graphical display: its own
        // executable, so the CLI does not load GTK.
        .executableTarget(name: "ferry-downloads", dependencies: ["FerryBus", "FerryCore", "CGLib", "CGtk",
                                                                 .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          path: "Sources/ferry-downloads", swiftSettings: agentSwift),

        // The seeds' apps, built by `swift build`: they use only the public library, in Swift 6 mode.
        .executableTarget(name: "fetch-pdf", dependencies: ["Ferry",
                          .product(name: "ArgumentParser", package: "swift-argument-parser")], path: "Examples/fetch-pdf"),
        .executableTarget(name: "podcast", dependencies: ["Ferry",
                          .product(name: "ArgumentParser", package: "swift-argument-parser")], path: "Examples/podcast"),

        .testTarget(name: "FerryCoreTests", dependencies: ["FerryCore"], path: "Tests/FerryCoreTests"),
        .testTarget(name: "FerryAgentTests", dependencies: ["FerryBus", "FerryCore", "Ferry", "FerryAgent", "FerrySDBus", "CSQLite"],
                    path: "Tests/FerryAgentTests", swiftSettings: agentSwift),
    ]
)
