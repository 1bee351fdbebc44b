import CFerryShim
import FerryBus
import FerryCore
import Glibc

/// Uploads whose bytes the agent keeps a copy of: CreateUploadFromFd (how a sandboxed app, which
/// may not name host paths, hands over a file), and a sandboxed app's CreateUpload by path (the
/// file is opened once, now, and copied: never reopened by a name the app could swap later).
/// Everything that needs no copy is checked first; the copy is made off the loop; the task is
/// created, and the call answered, once the copy is synced.
extension BusService {
    func uploadFromDescriptor(
        _ m: Agent1.CreateUploadFromFd, _ c: CallContext,
        _ answer: @escaping (Result<Int64, Error>) -> Void
    ) {
        var fd: Int32 = -1
        do {
            fd = try Self.descriptor(m.fd)
            let draft = try RequestDecoder.upload(url: m.url, m.options)
            keepCopy(of: fd, size: try UploadCopy.check(fd), draft, session: m.session, c, answer)
        } catch {
            if fd >= 0 { close(fd) }
            answer(.failure(error))
        }
    }

    func upload(_ m: Agent1.CreateUpload, _ c: CallContext, _ answer: @escaping (Result<Int64, Error>) -> Void) {
        var fd: Int32 = -1
        do {
            var draft = try RequestDecoder.upload(url: m.url, file: m.file, m.options)
            guard case .sandboxed(let app) = c.caller else {
                return answer(
                    .success(try run(CreateTasks(session: m.session, [draft]), c)[0]))
            }
            // Opened along the path it was allowed, no link on the way.
            fd = ferry_openat2(
                AT_FDCWD, try SandboxPaths.readable(m.file, app), O_RDONLY | O_CLOEXEC, 0, ferry_resolve_no_links())
            guard fd >= 0 else {
                throw FerryError(
                    .accessDenied, "upload of \(m.file) refused: it changed (a link?) while it was being checked")
            }
            draft.uploadFile = nil
            keepCopy(of: fd, size: try UploadCopy.check(fd), draft, session: m.session, c, answer)
        } catch {
            if fd >= 0 { close(fd) }
            answer(.failure(error))
        }
    }

    /// Copies `fd` (which it closes) into the owner's folder off the loop, then creates the task.
    private func keepCopy(
        of fd: Int32, size: Int64, _ draft: TaskRecord, session: String, _ c: CallContext,
        _ answer: @escaping (Result<Int64, Error>) -> Void
    ) {
        do {
            _ = try run(GetSession(session), c, checkPaths: false)  // its session, before any copying
        } catch {
            close(fd)
            return answer(.failure(error))
        }
        let app: String? = if case .sandboxed(let a) = c.caller { a.id } else { nil }
        let folder = agent.state.uploads(ofApp: app)
        let rules = UploadCopy.Rules(
            limits: agent.settings.uploadCopies, reserve: agent.settings.core.stateReserve,
            owner: app ?? "the host's programs")
        agent.onUploadCopier(owner: app ?? "", { Result { try UploadCopy.copy(fd, size: size, into: folder, rules) } })
        { [self] copied in
            answer(
                Result {
                    let copy = try copied.get()
                    var draft = draft
                    draft.uploadFile = copy.path
                    draft.expected = copy.size
                    draft.lastModified = nil  // the agent's own copy: nobody changes it
                    do {
                        return try run(CreateTasks(session: session, [draft]), c, checkPaths: false)[0]
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
        guard fd >= 0 else {
            throw FerryError(.failed, "cannot take the file descriptor: \(String(cString: strerror(errno)))")
        }
        return fd
    }
}
