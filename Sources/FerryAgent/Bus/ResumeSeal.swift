import CFerryShim
import CGLib
import FerryCore
import Glibc

/// Signs the resume data the agent hands out and checks what comes back (HMAC-SHA256 with a
/// key only this user can read, kept in the state folder): a sandboxed app can neither forge
/// a blob nor alter one it was given. The host can read the key anyway; for its old scripts a
/// blob with no signature is still taken from the host (the core refuses it from an app).
struct ResumeSeal {
    private let key: [UInt8]

    init(key: [UInt8]) { self.key = key }

    /// The key in `path`, made (32 random bytes, 0600) if there is none yet.
    init(keyFile path: String) throws {
        if let bytes = Self.read(path, count: 64), bytes.count >= 32 { key = bytes; return }
        guard let fresh = Self.read("/dev/urandom", count: 32), fresh.count == 32 else {
            throw FerryError(.failed, "cannot make a resume data key: no random bytes")
        }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw FerryError(.failed, "cannot write the resume data key \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard write(fd, fresh, fresh.count) == fresh.count, fsync(fd) == 0 else {
            throw FerryError(.failed, "cannot write the resume data key \(path): \(String(cString: strerror(errno)))")
        }
        key = fresh
    }

    /// The blob with its signature.
    func seal(_ data: ResumeData) -> [UInt8] {
        var signed = data
        signed.signature = mac(data.unsigned.encoded())
        return signed.encoded()
    }

    /// Decodes `bytes`; a signature present must be this agent's (else InvalidResumeData, for
    /// any caller), and marks the data `signedByAgent` then.
    func check(_ bytes: [UInt8]) throws -> ResumeData {
        var data = try ResumeData.decode(bytes)
        guard let signature = data.signature else { return data }
        guard Self.sameBytes(Array(signature.utf8), Array(mac(data.unsigned.encoded()).utf8)) else {
            throw FerryError(
                .invalidResumeData,
                "the resume data was altered or not made by this agent (its signature does not match)")
        }
        data.signedByAgent = true
        return data
    }

    private func mac(_ message: [UInt8]) -> String {
        guard let hex = g_compute_hmac_for_data(G_CHECKSUM_SHA256, key, gsize(key.count), message, gsize(message.count))
        else { return "" }
        defer { g_free(hex) }
        return String(cString: hex)
    }

    /// Compares in time that does not depend on where the first difference is.
    private static func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    private static func read(_ path: String, count: Int) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = Glibc.read(fd, &buffer, buffer.count)
        return n > 0 ? Array(buffer[0..<n]) : nil
    }
}
