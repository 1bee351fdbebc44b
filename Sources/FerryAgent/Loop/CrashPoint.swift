import FerryCore
import FoundationEssentials
import Glibc

/// Named steps of a task's life where a test can make the agent die (debug builds only):
/// FERRY_CRASH_AT=STEP[:N] aborts at the Nth time STEP is reached (default the first).
/// The crash test kills the agent at each of them and checks that nothing is lost or doubled.
/// Release builds compile every call to nothing.
enum CrashPoint: String, CaseIterable {
    case requestCommitted = "request-committed"  // a new task is durable, the reply not yet sent
    case transferStarted = "transfer-started"  // curl has the request
    case responseBegan = "response-began"  // headers decided and committed
    case checkpointWritten = "checkpoint-written"  // body bytes written to the staging file
    case transferEnded = "transfer-ended"  // curl reported the end of the attempt
    case fileSynced = "file-synced"  // the finished staging file is fsynced
    case linkedIntoPlace = "linked-into-place"  // the final name exists, completion not committed
    case completionCommitted = "completion-committed"  // state and events durable, staging not cleaned up
    case eventEmitted = "event-emitted"  // EventsAvailable sent
    case acknowledged = "acknowledged"  // the app's acknowledgement is durable
    // a resumable upload's URL is durable (made, or named by a 104)
    case uploadResourceRecorded = "upload-resource-recorded"
    case uploadOffsetAnswered = "upload-offset-answered"  // the server's offset is durable, the rest not sent

    #if DEBUG
        private static let target: (CrashPoint, Int)? = {
            guard let spec = ProcessInfo.processInfo.environment["FERRY_CRASH_AT"] else { return nil }
            let parts = spec.split(separator: ":")
            guard let step = parts.first.flatMap({ CrashPoint(rawValue: String($0)) }) else { return nil }
            return (step, parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
        }()
        nonisolated(unsafe) private static var hits = 0
        private static let lock = Lock()  // fileSynced and linkedIntoPlace are reached on the file worker
    #endif

    @inline(__always)
    static func reached(_ step: CrashPoint) {
        #if DEBUG
            guard let (target, n) = target, target == step else { return }
            lock.lock()
            hits += 1
            let crash = hits == n
            lock.unlock()
            if crash {
                fputs("ferryd: FERRY_CRASH_AT=\(step.rawValue):\(n): aborting\n", stderr)
                abort()
            }
        #endif
    }
}

/// The executor's one seam for crash points: `Agent` tells it what a turn did (its inputs, its
/// store writes, its commit, the effects carried out) and the steps follow from that; nothing
/// else in the executor names a step. Empty in release builds.
struct CrashSeam {
    #if DEBUG
        private var reached: [CrashPoint] = []
    #endif

    mutating func input(_ input: AgentInput) {
        #if DEBUG
            if case .responseBegan = input { reached.append(.responseBegan) }
            if case .uploadResourceAnnounced = input { reached.append(.uploadResourceRecorded) }
            if case .transferEnded(_, _, let o) = input {
                if o.location != nil, o.httpStatus == 201 { reached.append(.uploadResourceRecorded) }
                // A HEAD's answer: an offset with no body byte sent (a PATCH's answer has sent some).
                if o.uploadOffset != nil, o.bytesThisAttempt == 0 { reached.append(.uploadOffsetAnswered) }
            }
        #endif
    }

    mutating func wrote(_ write: StoreWrite) {
        #if DEBUG
            switch write {
            case .insert: reached.append(.requestCommitted)
            case .update(let r) where r.state == .completed: reached.append(.completionCommitted)
            case .deleteEvents: reached.append(.acknowledged)
            default: break
            }
        #endif
    }

    /// The turn committed: its steps are reached. `committed` false: they never were.
    mutating func turnEnded(committed: Bool) {
        #if DEBUG
            if committed { for step in reached { CrashPoint.reached(step) } }
            reached = []
        #endif
    }

    func carriedOut(_ effect: AgentEffect) {
        #if DEBUG
            if case .eventsAvailable = effect { CrashPoint.reached(.eventEmitted) }
        #endif
    }
}
