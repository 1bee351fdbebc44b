// ferry-bus-codegen XML OUTPUT: writes FerryBus's typed layer of dev.ferry.Agent1 from the
// interface XML (run by the BusCodegen build-tool plugin, as gdbus-codegen is run for C).
import CGLib
import Glibc

let args = CommandLine.arguments
guard args.count == 3 else {
    fputs("usage: ferry-bus-codegen INTERFACE.xml OUTPUT.swift\n", stderr)
    exit(2)
}
do {
    guard let file = fopen(args[1], "r") else { throw GeneratorError("cannot open \(args[1])") }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while case let n = fread(&chunk, 1, chunk.count, file), n > 0 { bytes += chunk[..<n] }
    fclose(file)
    let interface = try Interface(xml: String(decoding: bytes, as: UTF8.self), name: "dev.ferry.Agent1")
    let source = try Generator(interface: interface).source()
    // Written only when changed, so an unchanged XML rebuilds nothing.
    var old: [UInt8] = []
    if let f = fopen(args[2], "r") {
        while case let n = fread(&chunk, 1, chunk.count, f), n > 0 { old += chunk[..<n] }
        fclose(f)
    }
    if old != Array(source.utf8) {
        guard let out = fopen(args[2], "w"), fputs(source, out) >= 0, fclose(out) == 0 else {
            throw GeneratorError("cannot write \(args[2])")
        }
    }
} catch {
    fputs("ferry-bus-codegen: \(args[1]): \(error)\n", stderr)
    exit(1)
}
