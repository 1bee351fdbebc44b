import FerryCore

/// dev.ferry.Agent1's methods that create, list and control tasks.
extension Agent1 {
    public struct CreateDownload: Agent1Method {
        public static let method = AgentMethod.createDownload
        public static let reply = Replies.task
        public var session: String
        public var url: String
        public var options: TaskOptions
        public init(session: String, url: String, options: TaskOptions) { self.session = session; self.url = url; self.options = options }
        public var arguments: [Value] { [.string(session), .string(url), .dict(options.bus)] }
        public init(_ r: inout BusReader) throws { session = try r.string(); url = try r.string(); options = try TaskOptions(bus: r.dict()) }
    }

    /// Several downloads in one transaction; an option of the wrong type in any request is
    /// refused before the requests are looked at in order.
    public struct CreateDownloads: Agent1Method {
        public static let method = AgentMethod.createDownloads
        public static let reply = Replies.tasks
        static let requestType = "(sa{sv})"
        public var session: String
        public var requests: [(url: String, options: TaskOptions)]
        public init(session: String, requests: [(url: String, options: TaskOptions)]) { self.session = session; self.requests = requests }
        public var arguments: [Value] {
            [.string(session), .array(requests.map { .tuple([.string($0.url), .dict($0.options.bus)]) }, elementType: Self.requestType)]
        }
        public init(_ r: inout BusReader) throws {
            session = try r.string()
            let items = try r.array(of: Self.requestType) { $0 }
            requests = try items.enumerated().map { index, item in
                try BusReader.members(of: item, reading: "request \(index + 1)") { m in
                    let url = try m.string()
                    do { return (url, try TaskOptions(bus: m.dict())) } catch var e as FerryError where items.count > 1 {
                        e.message = "request \(index + 1): \(e.message)"
                        throw e
                    }
                }
            }
        }
    }

    public struct CreateDownloadFromResumeData: Agent1Method {
        public static let method = AgentMethod.createDownloadFromResumeData
        public static let reply = Replies.task
        public var session: String
        public var resumeData: [UInt8]
        public var options: TaskOptions
        public init(session: String, resumeData: [UInt8], options: TaskOptions) {
            self.session = session; self.resumeData = resumeData; self.options = options
        }
        public var arguments: [Value] { [.string(session), .bytes(resumeData), .dict(options.bus)] }
        public init(_ r: inout BusReader) throws {
            session = try r.string(); resumeData = try r.bytes(); options = try TaskOptions(bus: r.dict())
        }
    }

    public struct CreateUpload: Agent1Method {
        public static let method = AgentMethod.createUpload
        public static let reply = Replies.task
        public var session: String
        public var url: String
        public var file: String
        public var options: TaskOptions
        public init(session: String, url: String, file: String, options: TaskOptions) {
            self.session = session; self.url = url; self.file = file; self.options = options
        }
        public var arguments: [Value] { [.string(session), .string(url), .string(file), .dict(options.bus)] }
        public init(_ r: inout BusReader) throws {
            session = try r.string(); url = try r.string(); file = try r.string()
            options = try TaskOptions(bus: r.dict(), allowed: TaskOptions.uploadKeys, upload: true)
        }
    }

    /// `fd` is the index of the descriptor in the message (0: the one sent along).
    public struct CreateUploadFromFd: Agent1Method {
        public static let method = AgentMethod.createUploadFromFd
        public static let reply = Replies.task
        public var session: String
        public var url: String
        public var fd: Int32
        public var options: TaskOptions
        public init(session: String, url: String, fd: Int32 = 0, options: TaskOptions) {
            self.session = session; self.url = url; self.fd = fd; self.options = options
        }
        public var arguments: [Value] { [.string(session), .string(url), .handle(fd), .dict(options.bus)] }
        public init(_ r: inout BusReader) throws {
            session = try r.string(); url = try r.string(); fd = try r.handle()
            options = try TaskOptions(bus: r.dict(), allowed: TaskOptions.uploadKeys, upload: true)
        }
    }

    /// ListTasks, ListTaskRows: a page of tasks with ids above `after` ("" session: all).
    public struct ListTasks: Agent1Method {
        public static let method = AgentMethod.listTasks
        public static let reply = Replies.infos
        public var session: String
        public var after: Int64
        public var limit: Int
        public init(session: String, after: Int64, limit: Int) { self.session = session; self.after = after; self.limit = limit }
        public var arguments: [Value] { [.string(session), .uint64(UInt64(clamping: after)), .uint32(UInt32(clamping: limit))] }
        public init(_ r: inout BusReader) throws { session = try r.string(); after = try r.task(); limit = try r.count() }
    }

    public struct ListTaskRows: Agent1Method {
        public static let method = AgentMethod.listTaskRows
        public static let reply = Replies.rows
        public var page: ListTasks
        public init(session: String, after: Int64, limit: Int) { page = ListTasks(session: session, after: after, limit: limit) }
        public var arguments: [Value] { page.arguments }
        public init(_ r: inout BusReader) throws { page = try ListTasks(&r) }
    }

    public struct ListTaskRowsSection: Agent1Method {
        public static let method = AgentMethod.listTaskRowsSection
        public static let reply = Replies.rows
        public var session: String
        public var section: TaskSection
        public var offset: Int
        public var limit: Int
        public init(session: String, section: TaskSection, offset: Int, limit: Int) {
            self.session = session; self.section = section; self.offset = offset; self.limit = limit
        }
        public var arguments: [Value] {
            [.string(session), .string(section.rawValue), .uint32(UInt32(clamping: offset)), .uint32(UInt32(clamping: limit))]
        }
        public init(_ r: inout BusReader) throws {
            session = try r.string()
            let name = try r.string()
            guard let section = TaskSection(rawValue: name) else {
                throw FerryError(.invalidArgument, "unknown section \"\(name.prefix(32))\" (active or ended)")
            }
            self.section = section
            offset = try r.count(); limit = try r.count()
        }
    }

    public struct GetTask: TaskMethod {
        public static let method = AgentMethod.getTask
        public static let reply = Replies.info
        public var task: Int64
        public init(task: Int64) { self.task = task }
    }
    public struct Pause: TaskMethod {
        public static let method = AgentMethod.pause
        public static let reply = Replies.none
        public var task: Int64
        public init(task: Int64) { self.task = task }
    }
    public struct Resume: TaskMethod {
        public static let method = AgentMethod.resume
        public static let reply = Replies.none
        public var task: Int64
        public init(task: Int64) { self.task = task }
    }
    public struct Cancel: TaskMethod {
        public static let method = AgentMethod.cancel
        public static let reply = Replies.none
        public var task: Int64
        public init(task: Int64) { self.task = task }
    }
    public struct CancelProducingResumeData: TaskMethod {
        public static let method = AgentMethod.cancelProducingResumeData
        public static let reply = Replies.bytes
        public var task: Int64
        public init(task: Int64) { self.task = task }
    }

    public struct AnswerChallenge: Agent1Method {
        public static let method = AgentMethod.answerChallenge
        public static let reply = Replies.none
        public var task: Int64
        public var answer: ChallengeReply
        public init(task: Int64, answer: ChallengeReply) { self.task = task; self.answer = answer }
        public var arguments: [Value] { [.uint64(UInt64(clamping: task)), .dict(answer.bus)] }
        public init(_ r: inout BusReader) throws { task = try r.task(); answer = try ChallengeReply(bus: r.dict()) }
    }

    public struct RemoveTasks: Agent1Method {
        public static let method = AgentMethod.removeTasks
        public static let reply = Replies.none
        public var tasks: [Int64]
        public init(tasks: [Int64]) { self.tasks = tasks }
        public var arguments: [Value] { [.array(tasks.map { .uint64(UInt64(clamping: $0)) }, elementType: "t")] }
        public init(_ r: inout BusReader) throws { tasks = try r.array(of: "t") { try BusReader.taskID($0) } }
    }

    /// ClearFinished, PauseAll, ResumeAll: every task of a session ("": all) at once; how many.
    public struct ClearFinished: SessionMethod {
        public static let method = AgentMethod.clearFinished
        public static let reply = Replies.count
        public var session: String
        public init(session: String) { self.session = session }
    }
    public struct PauseAll: SessionMethod {
        public static let method = AgentMethod.pauseAll
        public static let reply = Replies.count
        public var session: String
        public init(session: String) { self.session = session }
    }
    public struct ResumeAll: SessionMethod {
        public static let method = AgentMethod.resumeAll
        public static let reply = Replies.count
        public var session: String
        public init(session: String) { self.session = session }
    }
}
