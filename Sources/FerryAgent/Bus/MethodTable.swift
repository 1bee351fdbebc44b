import FerryBus
import FerryCore

/// dev.ferry.Agent1's methods as a table: each method's handler receives the method's typed
/// arguments (read by its type in FerryBus, `Agent1`) and answers its typed reply. Nothing here
/// reads a value by position; the method types do, in the XML's order.
struct MethodTable {
    /// Who calls, as the bus says.
    struct Context {
        let caller: Caller
        let sender: String
    }
    /// The reply's values, or the error to answer with; called once.
    typealias Answer = (Result<[Value], Error>) -> Void
    typealias Handler = (_ arguments: [Value], _ context: Context, _ answer: @escaping Answer) -> Void

    private var handlers: [AgentMethod: Handler] = [:]

    /// A method answered at once.
    mutating func on<M: Agent1Method>(_ type: M.Type, _ body: @escaping (M, Context) throws -> M.Reply) {
        handlers[M.method] = { values, context, answer in
            answer(Result { M.reply.encode(try body(try M(arguments: values), context)) })
        }
    }

    /// A method answered later (when work off the loop is done).
    mutating func later<M: Agent1Method>(_ type: M.Type,
                                        _ body: @escaping (M, Context, @escaping (Result<M.Reply, Error>) -> Void) -> Void) {
        handlers[M.method] = { values, context, answer in
            do {
                body(try M(arguments: values), context) { answer($0.map(M.reply.encode)) }
            } catch {
                answer(.failure(error))
            }
        }
    }

    /// The methods with a handler (every one of the XML's, checked when the agent starts).
    var methods: Set<AgentMethod> { Set(handlers.keys) }

    func handle(_ method: AgentMethod, _ arguments: [Value], _ context: Context, _ answer: @escaping Answer) {
        guard let handler = handlers[method] else {
            return answer(.failure(FerryError(.invalidArgument, "unknown method \(method.rawValue)")))
        }
        handler(arguments, context, answer)
    }
}

/// The core's replies, as the method that asked expects them: another kind is an internal error.
extension AgentReply {
    func expect<T>(_ what: String, _ value: (AgentReply) -> T?) throws -> T {
        guard let v = value(self) else { throw FerryError(.failed, "internal error: the agent answered \(self) where \(what) was due") }
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
