/// What a request reaches: the one table of the API's requests by kind — the session or tasks
/// each is about, the tasks it makes, the page it reads, and whether a sandboxed app may ask it.
/// `SandboxPolicy` checks an app's request by its reach alone (plus the two rules of its own:
/// a session's namespace, resume data's signature); the router runs the request.
enum RequestReach: Sendable, Equatable {
    /// Opens (or makes) the session named.
    case opening(String)
    /// Makes this many tasks in the session named (at most `AgentCore.maxBatch` a call).
    case making(String, count: Int)
    /// The session named.
    case session(String)
    /// The session named, or ("") every session the caller may see.
    case sessions(String)
    /// A page of the session named, or of every session the caller may see (at most
    /// `AgentRequest.pageSize`).
    case page(String, limit: Int)
    /// These tasks.
    case tasks([Int64])
    /// The agent's own figures (an app's cover its own sessions).
    case agent
    /// The user's alone: an app is refused, for this reason.
    case userOnly(String)
}

extension AgentRequest {
    var reach: RequestReach {
        switch self {
        case .openSession(let session, _, _): .opening(session)
        case .createTasks(let session, let drafts): .making(session, count: drafts.count)
        case .createFromResumeData(let session, _, _, _): .making(session, count: 1)
        case .finishedHandlingEvents(let session), .invalidateSession(let session, _), .getSession(let session),
            .acknowledgeEvents(let session, _), .fetchEvents(let session, _, _):
            .session(session)
        case .listTasks(let session, _, let limit), .listSection(let session, _, _, let limit):
            .page(session, limit: limit)
        case .clearFinished(let session), .pauseAll(let session), .resumeAll(let session): .sessions(session)
        case .getTask(let id), .pause(let id), .resume(let id), .cancel(let id), .cancelProducingResumeData(let id),
            .answerChallenge(let id, _):
            .tasks([id])
        case .removeTasks(let ids): .tasks(ids)
        case .status: .agent
        case .resetBadge: .userOnly("the user.badge is the user's: a sandboxed app cannot reset it")
        case .sandboxed: .userOnly("nested sandbox request")
        }
    }

    /// A request that reaches `.sessions`, for one of them.
    func only(_ session: String) -> AgentRequest {
        switch self {
        case .clearFinished: .clearFinished(session: session)
        case .pauseAll: .pauseAll(session: session)
        case .resumeAll: .resumeAll(session: session)
        default: self
        }
    }

    /// How many tasks the request would create.
    var newTasks: Int { if case .making(_, let n) = reach { n } else { 0 } }
}
