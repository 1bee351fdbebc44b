/// The methods of dev.ferry.Agent1, as desktop/dev.ferry.Agent1.xml names them: the agent
/// dispatches on these and clients call them; no other file spells a method name.
public enum AgentMethod: String, CaseIterable, Sendable {
    case openSession = "OpenSession"
    case createDownload = "CreateDownload"
    case createDownloads = "CreateDownloads"
    case createUpload = "CreateUpload"
    case createUploadFromFd = "CreateUploadFromFd"
    case createDownloadFromResumeData = "CreateDownloadFromResumeData"
    case listTasks = "ListTasks"
    case listTaskRows = "ListTaskRows"
    case listTaskRowsSection = "ListTaskRowsSection"
    case getTask = "GetTask"
    case pause = "Pause"
    case resume = "Resume"
    case cancel = "Cancel"
    case cancelProducingResumeData = "CancelProducingResumeData"
    case fetchEvents = "FetchEvents"
    case acknowledgeEvents = "AcknowledgeEvents"
    case answerChallenge = "AnswerChallenge"
    case finishedHandlingEvents = "FinishedHandlingEvents"
    case invalidateSession = "InvalidateSession"
    case getSession = "GetSession"
    case resetBadge = "ResetBadge"
    case removeTasks = "RemoveTasks"
    case clearFinished = "ClearFinished"
    case pauseAll = "PauseAll"
    case resumeAll = "ResumeAll"
    case getStatus = "GetStatus"
}

/// The signals of dev.ferry.Agent1.
public enum AgentSignal: String, CaseIterable, Sendable {
    case eventsAvailable = "EventsAvailable"
    case taskChanged = "TaskChanged"
    case tasksRemoved = "TasksRemoved"
    case tasksProgressed = "TasksProgressed"
}
