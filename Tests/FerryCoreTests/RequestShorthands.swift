@testable import FerryCore

// The tests name requests as the API does (`.pause(id)`, `.createTasks(session:_:)`): each a
// static member where the request type is expected (SE-0299).
extension CoreRequest where Self == OpenSession {
    static func openSession(_ id: String, _ options: SessionOptions, peer: String) -> Self { OpenSession(id, options, peer: peer) }
}
extension CoreRequest where Self == GetSession { static func getSession(_ s: String) -> Self { GetSession(s) } }
extension CoreRequest where Self == InvalidateSession {
    static func invalidateSession(_ s: String, cancelTasks: Bool) -> Self { InvalidateSession(s, cancelTasks: cancelTasks) }
}
extension CoreRequest where Self == FinishedHandlingEvents {
    static func finishedHandlingEvents(_ s: String) -> Self { FinishedHandlingEvents(s) }
}
extension CoreRequest where Self == FetchEvents {
    static func fetchEvents(session: String, after: UInt64, limit: Int) -> Self { FetchEvents(session: session, after: after, limit: limit) }
}
extension CoreRequest where Self == AcknowledgeEvents {
    static func acknowledgeEvents(session: String, upTo: UInt64) -> Self { AcknowledgeEvents(session: session, upTo: upTo) }
}
extension CoreRequest where Self == CreateTasks {
    static func createTasks(session: String, _ drafts: [TaskRecord]) -> Self { CreateTasks(session: session, drafts) }
}
extension CoreRequest where Self == CreateFromResumeData {
    static func createFromResumeData(session: String, _ data: ResumeData, _ draft: TaskRecord, destinationGiven: Bool) -> Self {
        CreateFromResumeData(session: session, data, draft, destinationGiven: destinationGiven)
    }
}
extension CoreRequest where Self == GetTask { static func getTask(_ id: Int64) -> Self { GetTask(id) } }
extension CoreRequest where Self == TaskControl {
    static func pause(_ id: Int64) -> Self { TaskControl(.pause, id) }
    static func resume(_ id: Int64) -> Self { TaskControl(.resume, id) }
    static func cancel(_ id: Int64) -> Self { TaskControl(.cancel, id) }
}
extension CoreRequest where Self == CancelProducingResumeData {
    static func cancelProducingResumeData(_ id: Int64) -> Self { CancelProducingResumeData(id) }
}
extension CoreRequest where Self == AnswerChallenge {
    static func answerChallenge(_ id: Int64, _ reply: ChallengeReply) -> Self { AnswerChallenge(id, reply) }
}
extension CoreRequest where Self == RemoveTasks { static func removeTasks(_ ids: [Int64]) -> Self { RemoveTasks(ids) } }
extension CoreRequest where Self == SessionWide {
    static func clearFinished(session: String) -> Self { SessionWide(.clearFinished, session: session) }
    static func pauseAll(session: String) -> Self { SessionWide(.pauseAll, session: session) }
    static func resumeAll(session: String) -> Self { SessionWide(.resumeAll, session: session) }
}
extension CoreRequest where Self == ListTasks {
    static func listTasks(session: String, after: Int64, limit: Int) -> Self { ListTasks(session: session, after: after, limit: limit) }
}
extension CoreRequest where Self == ListSection {
    static func listSection(session: String, active: Bool, offset: Int, limit: Int) -> Self {
        ListSection(session: session, active: active, offset: offset, limit: limit)
    }
}
extension CoreRequest where Self == GetStatus { static var status: Self { GetStatus() } }
extension CoreRequest where Self == ResetBadge { static var resetBadge: Self { ResetBadge() } }
