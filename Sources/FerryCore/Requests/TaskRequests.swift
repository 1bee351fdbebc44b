/// The requests that make tasks or act on them by id.

public struct CreateTasks: CoreRequest, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var session: String
    /// New tasks' records (without ids), all or none.
    public var drafts: [TaskRecord]
    public init(session: String, _ drafts: [TaskRecord]) { self.session = session; self.drafts = drafts }

    public var reach: RequestReach { .making(session, count: drafts.count) }
    public func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> Self {
        var r = self
        r.drafts = try drafts.map { try $0.resolvingPaths(resolve) }
        return r
    }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        CreateTasks(session: try key(session), drafts)
    }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> ([Int64], [AgentEffect]) {
        let drafts = grant.app == nil ? drafts : drafts.map(SandboxPolicy.rankedBelowTheUser)
        return try core.create(session: session, drafts, ctx)
    }
}

public struct CreateFromResumeData: CoreRequest, ReplyNamesNoSession {
    public var session: String
    public var data: ResumeData
    public var draft: TaskRecord
    /// The caller chose where it goes.
    public var destinationGiven: Bool
    public init(session: String, _ data: ResumeData, _ draft: TaskRecord, destinationGiven: Bool) {
        self.session = session; self.data = data; self.draft = draft; self.destinationGiven = destinationGiven
    }

    public var reach: RequestReach { .making(session, count: 1) }
    public func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> Self {
        var r = self
        r.draft = try draft.resolvingPaths(resolve)
        return r
    }
    public func keyed(_ key: (String) throws -> String) throws -> Self {
        var r = self
        r.session = try key(session)
        return r
    }
    public func admit(_ policy: SandboxPolicy) throws { try policy.mayContinue(data) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Int64, [AgentEffect]) {
        let draft = grant.app == nil ? draft : SandboxPolicy.rankedBelowTheUser(draft)
        return try core.createFromResumeData(
            session: session, data, draft, destinationGiven: destinationGiven, ctx)
    }
}

extension TaskRecord {
    /// The record with its paths resolved: the file to upload read, its destination written.
    func resolvingPaths(_ resolve: (String, PathUse) throws -> String) throws -> TaskRecord {
        var d = self
        if let file = d.uploadFile { d.uploadFile = try resolve(file, .read) }
        if let dir = d.directory { d.directory = try resolve(dir, .writeFolder(option: "directory")) }
        if let out = d.output { d.output = try resolve(out, .writeFile(option: "output")) }
        return d
    }
}

public struct GetTask: CoreRequest, CarriesNoPath, NamesNoSession, NoSandboxRuleOfItsOwn {
    public var id: Int64
    public init(_ id: Int64) { self.id = id }
    public var reach: RequestReach { .tasks([id]) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (TaskRecord, [AgentEffect]) {
        (try core.tasks.shownTask(id, ctx.ledger), [])
    }
    public static func named(_ reply: TaskRecord, for app: String) -> TaskRecord { reply.named(for: app) }
}

/// Pause, Resume and Cancel: one task's machine steps.
public struct TaskControl: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public enum Action: Sendable { case pause, resume, cancel }
    public var id: Int64
    public var action: Action
    public init(_ action: Action, _ id: Int64) { self.action = action; self.id = id }
    public var reach: RequestReach { .tasks([id]) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        switch action {
        case .pause:
            try core.tasks.notSaving(id)
            return ((), core.absorb(try core.tasks.step(id, ctx) { m, now in try m.pause(now: now) }, ctx))
        case .resume:
            var steps = try core.tasks.step(id, ctx) { m, now in try m.resume(now: now) }
            steps.effects.append(.wake(.schedule, at: nil))
            return ((), core.absorb(steps, ctx))
        case .cancel:
            try core.tasks.notSaving(id)
            let steps = try core.tasks.step(id, ctx) { m, now in try m.cancel(keepPartial: false, now: now) }
            return ((), core.absorb(steps, ctx))
        }
    }
}

public struct CancelProducingResumeData: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession,
    NoSandboxRuleOfItsOwn
{
    public var id: Int64
    public init(_ id: Int64) { self.id = id }
    public var reach: RequestReach { .tasks([id]) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (ResumeData, [AgentEffect]) {
        try core.tasks.notSaving(id)
        let before = try core.tasks.shownTask(id, ctx.ledger)  // a cancel keeps what the resume data holds
        let steps = try core.tasks.step(id, ctx) { m, now in try m.cancel(keepPartial: true, now: now) }
        return (AgentCore.resumeBlob(before, staged: ctx.ledger.stagedBytes(id)), core.absorb(steps, ctx))
    }
}

public struct AnswerChallenge: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var id: Int64
    public var reply: ChallengeReply
    public init(_ id: Int64, _ reply: ChallengeReply) { self.id = id; self.reply = reply }
    public var reach: RequestReach { .tasks([id]) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        ((), try core.answerChallenge(id, reply, ctx))
    }
}

public struct RemoveTasks: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var ids: [Int64]
    public init(_ ids: [Int64]) { self.ids = ids }
    public var reach: RequestReach { .tasks(ids) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Void, [AgentEffect]) {
        ((), core.absorb(try core.tasks.remove(ids, ctx), ctx))
    }
}

/// SetURL: a download fetched from a new URL from now on (`TaskMachine.newURL`). The reply:
/// whether the app's header fields were dropped (the new URL is on another origin).
public struct SetTaskURL: CoreRequest, CarriesNoPath, NamesNoSession, ReplyNamesNoSession, NoSandboxRuleOfItsOwn {
    public var id: Int64
    /// In ASCII and validated (`TaskDraft.checkedURL`), with its host.
    public var url: String
    public var host: String
    public init(_ id: Int64, url: String, host: String) { self.id = id; self.url = url; self.host = host }
    public var reach: RequestReach { .tasks([id]) }
    public func run(_ core: inout AgentCore, _ ctx: TaskContext, _ grant: Grant) throws -> (Bool, [AgentEffect]) {
        try core.setURL(id, self, ctx)
    }
}
