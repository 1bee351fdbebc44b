import FerryBus
import FerryCore
import Glibc

/// CreateUploadFromFd: how a sandboxed app (which may not name host paths) hands over a file.
/// Everything that needs no copy is checked first; the copy is made off the loop; the task is
/// created, and the call answered, once the copy is synced.
extension BusService {
    func uploadFromDescriptor(_ m: Agent1.CreateUploadFromFd, _ c: MethodTable.Context,
                              _ answer: @escaping (Result<Int64, Error>) -> Void) {
        var fd: Int32 = -1
        var size: Int64 = 0
        var draft = TaskRecord(session: "", url: "", host: "")
        do {
            fd = try Self.descriptor(m.fd)
            draft = try RequestDecoder.upload(url: m.url, m.options)
            _ = try run(.getSession(m.session), c, checkPaths: false)   // its session, before any copying
            size = try UploadCopy.check(fd)
        } catch {
            if fd >= 0 { close(fd) }
            return answer(.failure(error))
        }
        let app: String? = if case .sandboxed(let a) = c.caller { a.id } else { nil }
        let folder = agent.state.uploads(ofApp: app)
        let rules = UploadCopy.Rules(limits: agent.settings.uploadCopies, reserve: agent.settings.transfer.stateReserve,
                                     owner: app ?? "the host's programs")
        let descriptor = fd, seen = size
        agent.onUploadCopier({ Result { try UploadCopy.copy(descriptor, size: seen, into: folder, rules) } }) { [self] copied in
            answer(Result {
                let copy = try copied.get()
                draft.uploadFile = copy.path
                draft.expected = copy.size
                do {
                    return try run(.createTasks(session: m.session, [draft]), c, checkPaths: false).expect("a task") { $0.taskID }
                } catch {
                    unlink(copy.path)
                    throw error
                }
            })
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
