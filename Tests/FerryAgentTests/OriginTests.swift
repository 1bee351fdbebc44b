import Ferry
import FerryBus
import FerryCore
import Foundation
import Testing

/// Credentials go only to the origin they were given for (issue 38, items 1–3). The faultserver
/// also listens on 127.0.0.2, the same port: another origin, which the upload servers name as
/// the upload resource (a tus Location, an IETF-draft 104 announcement). The bytes follow the
/// resource there, as they would follow a 307; the app's Authorization header and the URL's
/// password never do. Each test first shows the agent reached the other origin (the control).
@Suite(.serialized) struct OriginTests {
    static let other = "127.0.0.2"
    static let token = "Bearer origin-test-token"

    static func session(_ h: Harness, _ rec: Recorder, _ name: String) throws -> FerrySession {
        var config = FerrySessionConfiguration.background(withIdentifier: "dev.ferry.test." + name)
        config.busAddress = h.busAddress
        return try FerrySession(configuration: config, delegate: rec)
    }

    static func upload(_ session: FerrySession, _ rec: Recorder, _ url: String, _ file: String,
                       headers: [String: String] = [:]) throws -> UInt64 {
        let request = FerryRequest(url: URL(string: url)!, httpMethod: "POST", allHTTPHeaderFields: headers)
        let task = try session.uploadTask(with: request, fromFile: URL(fileURLWithPath: file))
        task.resume()
        let id = task.taskIdentifier
        try rec.wait("upload \(id) ended", timeout: 60) { $0.completed(id) != nil }
        return id
    }

    static func toOther(_ h: Harness) throws -> [Harness.Request] {
        try h.serverLog().filter { $0.host?.hasPrefix(other + ":") == true }
    }

    /// tus: the creation answers 201 with a Location on 127.0.0.2. The file goes there (PATCH),
    /// the app's Authorization header only to the task's own origin.
    @Test func aTusResourceOnAnotherOriginGetsNoAuthorizationHeader() throws {
        let h = try Harness()
        try h.startFaultServer(also: Self.other)
        try h.startAgent()
        let body = try h.makeFile("doc.bin", size: 300_000)
        let rec = Recorder()
        let session = try Self.session(h, rec, "OriginTus")
        let id = try Self.upload(session, rec, h.faultURL("tus/", "otherhost=\(Self.other)"), h.www + "/doc.bin",
                                 headers: ["Authorization": Self.token])
        #expect(rec.calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        let creation = try h.serverLog().filter { $0.method == "POST" }
        #expect(creation.count == 1 && creation.first?.authorization == Self.token)   // the task's origin has it
        let elsewhere = try Self.toOther(h)
        #expect(elsewhere.contains { $0.method == "PATCH" }, "the agent never reached the other origin: \(elsewhere)")
        #expect(elsewhere.allSatisfy { $0.authorization == nil && $0.cookie == nil }, "\(elsewhere.map(\.authorization))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        session.disconnect()
    }

    /// The IETF draft's optimistic way: a plain upload, a 104 names a resource on 127.0.0.2, the
    /// connection drops; the agent asks that resource for its offset and sends the rest there,
    /// without the app's Authorization header.
    @Test func aResourceA104AnnouncedOnAnotherOriginGetsNoAuthorizationHeader() throws {
        let h = try Harness()
        try h.startFaultServer(also: Self.other)
        try h.startAgent()
        let body = try h.makeFile("doc.bin", size: 2_000_000)
        let rec = Recorder()
        let session = try Self.session(h, rec, "Origin104")
        let url = h.faultURL("ietf/", "nooptions=1&drops=1&dropafter=500000&otherhost=\(Self.other)")
        let id = try Self.upload(session, rec, url, h.www + "/doc.bin", headers: ["Authorization": Self.token])
        #expect(rec.calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        let elsewhere = try Self.toOther(h)
        #expect(elsewhere.contains { $0.method == "HEAD" } && elsewhere.contains { $0.method == "PATCH" },
                "the agent never reached the other origin: \(elsewhere.map(\.method))")
        #expect(elsewhere.allSatisfy { $0.authorization == nil }, "\(elsewhere.map(\.authorization))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/ietf-1")) == body)
        session.disconnect()
    }

    /// The URL's user:password is bound to the URL's origin. The resource on 127.0.0.2 asks for
    /// credentials: the agent does not answer with the task's password; the app is challenged
    /// for 127.0.0.2, and its answer (for that origin) is what 127.0.0.2 gets.
    @Test func theURLsPasswordStaysWithItsOrigin() throws {
        let h = try Harness()
        try h.startFaultServer(also: Self.other)
        try h.startAgent()
        let body = try h.makeFile("doc.bin", size: 300_000)
        let password = "Pw-\(UInt32.random(in: 0...UInt32.max))"
        let rec = Recorder()
        rec.answers = [.use(FerryCredential(user: "bob", password: "other-origin", persistence: .none))]
        let session = try Self.session(h, rec, "OriginPassword")
        let url = h.faultURL("tus/", "otherhost=\(Self.other)&resauth=bob:other-origin")
            .replacingOccurrences(of: "http://", with: "http://ann:\(password)@")
        let id = try Self.upload(session, rec, url, h.www + "/doc.bin")
        #expect(rec.calls.completed(id) == .completed(id, error: nil, hasResumeData: false))
        #expect(rec.challengeHosts == [Self.other], "\(rec.challengeHosts) \(h.agentLog.suffix(3000)) \(try! h.serverLog().map { ($0.method ?? "", $0.host ?? "", $0.status, $0.authorization ?? "-") })")
        let elsewhere = try Self.toOther(h)
        #expect(elsewhere.first?.status == 401, "the other origin never asked: \(elsewhere.map(\.status))")
        let annsBasic = "Basic " + Data("ann:\(password)".utf8).base64EncodedString()
        #expect(!elsewhere.contains { $0.authorization == annsBasic }, "the URL's password went to the other origin")
        #expect(elsewhere.contains { $0.method == "PATCH" && $0.authorization == "Basic " + Data("bob:other-origin".utf8).base64EncodedString() })
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.www + "/uploads/tus-1")) == body)
        session.disconnect()
    }
}
