import FerryCore
import Foundation
import Glibc

/// A graphical display for the window's tests: Xvfb, the accessibility bus, the window driver.
extension Harness {
    /// Can this machine show a window to tests (Xvfb, the accessibility bus, pyatspi)?
    /// Real input events (XTest) for what AT-SPI cannot do in GTK 4.8 (activate a list row).
    static var canSendInput: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/xdotool") }

    static var canShowWindows: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb")
            && FileManager.default.isExecutableFile(atPath: "/usr/libexec/at-spi-bus-launcher")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/pyatspi")
            && FileManager.default.isExecutableFile(atPath: buildDirectory + "/ferry-downloads")
    }

    /// Starts Xvfb on a free display and the accessibility bus on the private session bus, so a
    /// GTK window started with `environment` can be read and driven through AT-SPI.
    func startDisplay() throws {
        let x = Process()
        x.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        x.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1024x768x24"]
        let out = Pipe()
        x.standardOutput = out
        x.standardError = FileHandle.nullDevice
        try x.run()
        background.append(x)
        display = ":" + (try Self.readLine(out)).trimmingCharacters(in: .whitespaces)
        let l = Process()
        l.executableURL = URL(fileURLWithPath: "/usr/libexec/at-spi-bus-launcher")
        l.arguments = ["--launch-immediately"]
        l.environment = environment
        l.standardOutput = FileHandle.nullDevice
        l.standardError = FileHandle.nullDevice
        try l.run()
        background.append(l)
        let r = try run("/usr/bin/gdbus", ["wait", "--session", "--timeout", "20", "org.a11y.Bus"])
        guard r.status == 0 else { throw FerryError(.failed, "the accessibility bus did not start") }
    }

    func killEverythingOnThisBus() {
        let mark = Array("DBUS_SESSION_BUS_ADDRESS=\(busAddress)\u{0}".utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != getpid(),
                  let env = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { continue }
            if env.count >= mark.count, Array(env).windowContains(mark) { kill(pid, SIGKILL) }
        }
    }

    /// Runs Tests/Support/window-driver.py (pyatspi) with `args`; its stdout.
    func windowDriver(_ args: String...) throws -> String {
        var r = try run("/usr/bin/python3", [Self.packageRoot + "/Tests/Support/window-driver.py"] + args)
        // The driver itself (libatspi under pyatspi) can die of a signal on a loaded machine:
        // a reading command is asked once more; one that acts is not (it may have acted).
        if r.signaled, ["rows", "has", "gone", "get"].contains(args.first ?? "") {
            r = try run("/usr/bin/python3", [Self.packageRoot + "/Tests/Support/window-driver.py"] + args)
        }
        guard r.status == 0 else {
            throw FerryError(.failed, "window-driver \(args): \(r.signaled ? "killed by signal \(r.status)" : r.stderr)")
        }
        return r.stdout
    }

    /// The mean luminance (0 black … 1 white) of a rectangle of the display, read with xwd
    /// (the X server's own picture of the screen; the window sits at 0,0 with no window manager).
    func luminance(x: Int, y: Int, width: Int, height: Int) throws -> Double {
        let r = try run("/usr/bin/xwd", ["-root", "-silent", "-display", display ?? ""])
        guard r.status == 0 else { throw FerryError(.failed, "xwd: \(r.stderr)") }
        let d = Array(r.stdoutData)
        // XWD: a header of big-endian 32-bit fields, the colormap, then the pixels (ZPixmap).
        func field(_ i: Int) -> Int { d[i * 4 ..< i * 4 + 4].reduce(0) { $0 << 8 | Int($1) } }
        let headerSize = field(0), bitsPerPixel = field(11), bytesPerLine = field(12), colors = field(19)
        let lsbFirst = field(7) == 0, start = headerSize + colors * 12
        let size = bitsPerPixel / 8   // 3 (Xvfb's 24-bit screen, packed) or 4
        guard size >= 3, d.count >= start + (y + height) * bytesPerLine else {
            throw FerryError(.failed, "xwd: \(bitsPerPixel) bits a pixel, \(d.count) bytes")
        }
        var sum = 0.0
        for row in y ..< y + height {
            for col in x ..< x + width {
                let p = start + row * bytesPerLine + col * size, o = size - 3
                let (red, green, blue) = lsbFirst ? (d[p + 2], d[p + 1], d[p]) : (d[p + o], d[p + o + 1], d[p + o + 2])
                sum += (0.2126 * Double(red) + 0.7152 * Double(green) + 0.0722 * Double(blue)) / 255
            }
        }
        return sum / Double(width * height)
    }
}

private extension Array where Element == UInt8 {
    func windowContains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}
