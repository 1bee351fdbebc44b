import FerryBus
import FerryCore

/// Who calls one of dev.ferry.Agent1's methods, as the bus says.
struct CallContext {
    let caller: Caller
    let sender: String
}

/// The core's replies, as the method that asked expects them: another kind is an internal error.
extension AgentReply {
    func expect<T>(_ what: String, _ value: (AgentReply) -> T?) throws -> T {
        guard let v = value(self) else {
            throw FerryError(.failed, "internal error: the agent answered \(self) where \(what) was due")
        }
        return v
    }
    var taskIDs: [Int64]? { if case .taskIDs(let ids) = self { ids } else { nil } }
    var taskID: Int64? { if case .taskIDs(let ids) = self, ids.count == 1 { ids[0] } else { nil } }
    var records: [TaskRecord]? { if case .tasks(let list) = self { list } else { nil } }
    var record: TaskRecord? { if case .task(let r) = self { r } else { nil } }
    var resumeBlob: ResumeData? { if case .resumeData(let b) = self { b } else { nil } }
    var number: Int? { if case .count(let n) = self { n } else { nil } }
    var session: SessionInfo? { if case .sessionInfo(let s) = self { s } else { nil } }
    var isNone: Void? { if case .none = self { () } else { nil } }
}
