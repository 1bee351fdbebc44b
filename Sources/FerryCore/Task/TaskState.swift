/// Where a task is in its life. The raw values are the public contract
/// (CLI JSON, D-Bus `state`, the store), so never rename them.
public enum TaskState: String, Sendable, CaseIterable, Codable {
    case queued, running, waiting, paused, completed, failed, canceled

    /// A task in a final state never transfers again.
    public var isFinal: Bool { self == .completed || self == .failed || self == .canceled }
}

/// Why a `waiting` task is not transferring.
public enum WaitReason: String, Sendable, Codable {
    case network  // no network (or only a metered one the session may not use)
    case retry  // a transient failure; the next attempt is scheduled
    case space  // the disk is full; retried later
    case credentials  // the server wants authentication; the app was asked (a challenge event)
    case proxy  // the proxy for the URL refused or could not be reached; retried later
    case folder  // the destination folder is gone (a drive pulled, a share down) or unwritable; the bytes are kept
    case scheduled  // created with an earliest-begin time still to come (iOS's earliestBeginDate)
}
