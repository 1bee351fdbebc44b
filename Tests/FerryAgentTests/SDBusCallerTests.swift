import FerryBus
import FerryCore
import FerrySDBus
import Testing

/// `ferry list` reads its pages over sd-bus (`SDBusCaller`), not GDBus: the replies must be the
/// same values GDBus gives, and an error the same FerryError.
@Suite(.serialized) struct SDBusCallerTests {
    @Test func repliesAndErrorsAreTheOnesGDBusGives() throws {
        let h = try Harness()
        try h.startAgent()
        let gdbus = try h.client()
        let sdbus = try #require(SDBusCaller(address: h.busAddress))
        _ = try gdbus.call("OpenSession", [.string("s"), .dict([:])])
        let later = Value.dict(["paused": .bool(true), "headers": .stringDict(["X-A": "1"]), "priority": .double(0.75)])
        _ = try sdbus.call("CreateDownloads", [.string("s"), .array([
            .tuple([.string("http://127.0.0.1:9/a%20b.bin?q=1"), later]),
            .tuple([.string("http://127.0.0.1:9/caf\u{e9}.txt"), .dict(["paused": .bool(true)])]),
        ], elementType: "(sa{sv})")])
        for (method, args) in [
            ("ListTaskRows", [Value.string(""), .uint64(0), .uint32(0)]),
            ("ListTasks", [.string("s"), .uint64(0), .uint32(0)]),
            ("GetStatus", []),
            ("GetSession", [.string("s")]),
        ] {
            let viaSDBus = try sdbus.call(method, args)
            #expect(viaSDBus == (try gdbus.call(method, args)), "\(method)")
            #expect(!viaSDBus.isEmpty)
        }
        #expect(try sdbus.call("ListTaskRows", [.string(""), .uint64(0), .uint32(0)]).first?.arrayValue?.count == 2)
        let error = #expect(throws: FerryError.self) { try sdbus.call("GetTask", [.uint64(999)]) }
        #expect(error?.kind == .noSuchTask)
    }
}
