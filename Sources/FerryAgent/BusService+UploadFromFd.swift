import FerryBus
import FerryCore
import Glibc

/// CreateUploadFromFd: how a sandboxed app (which may not name host paths) hands over a file.
/// Everything that needs no copy is checked first; the copy is made off the loop; the task is
/// created, and the call answered, once the copy is synced.
extension BusService {
    func uploadFromDescriptor(_ a: [Value], caller: Caller, _ invocation: BusCall) {
        let name = AgentMethod.createUploadFromFd.rawValue
        let session = a[0].stringValue ?? "", url = a[1].stringValue ?? "", options = a[3].dictValue ?? [:]
        guard case .handle(let received) = a[2] else { return reply(invocation, name) { throw FerryError(.invalidArgument, "no descriptor") } }
        var fd: Int32 = -1
        var draft = TaskRecord(session: "", url: "", host: "")
        func asCaller(_ r: AgentRequest) -> AgentRequest { if case .sandboxed(let app) = caller { .sandboxed(app, r) } else { r } }
        do {
            fd = try Self.descriptor(received)
            draft = try RequestDecoder.upload(url: url, options)
            _ = try agent.request(asCaller(.getSession(session)))   // its session, before any copying
            _ = try UploadCopy.check(fd)
        } catch {
            if fd >= 0 { close(fd) }
            return reply(invocation, name) { throw error }
        }
        let folder = AgentCore.uploadCopies(stateDirectory: agent.settings.stateDirectory)
        let descriptor = fd
        agent.onFileWorker({ Result { try UploadCopy.copy(descriptor, into: folder) } }) { [self] copied in
            reply(invocation, name) {
                let copy = try copied.get()
                draft.uploadFile = copy.path
                draft.expected = copy.size
                do {
                    return encode(try agent.request(asCaller(.createTasks(session: session, [draft]))), method: .createUploadFromFd, caller: caller)
                } catch {
                    unlink(copy.path)
                    throw error
                }
            }
        }
    }

    /// The descriptor the caller sent, duplicated (the call's message owns `received`).
    private static func descriptor(_ received: Int32) throws -> Int32 {
        guard received >= 0 else { throw FerryError(.invalidArgument, "no file descriptor came with the call") }
        let fd = fcntl(received, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw FerryError(.failed, "cannot take the file descriptor: \(String(cString: strerror(errno)))") }
        return fd
    }
}
