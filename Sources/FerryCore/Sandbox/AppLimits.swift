/// What one sandboxed app may hold at once, so that no app can grow the agent without bound or
/// stall the user's own calls: requests in one batch, unfinished tasks, open sessions, and
/// events left unacknowledged in its sessions. Beyond one, a request is LimitExceeded naming the
/// limit and its ferryd option. The host's programs (the user's) are not limited.
public struct AppLimits: Sendable, Equatable {
    public var batch = 1_000
    public var unfinishedTasks = 10_000
    public var sessions = 100
    public var unacknowledgedEvents = 10_000

    public init() {}

    /// `new` more tasks for an app with `unfinished` tasks and `unacknowledged` events waiting.
    public func admitTasks(_ new: Int, unfinished: Int, unacknowledged: Int, app: String) throws {
        guard new <= batch else {
            throw FerryError(
                .limitExceeded,
                "\(new) requests in one call: \(app) may send at most \(batch) at once (ferryd --app-max-batch)")
        }
        guard unfinished + new <= unfinishedTasks else {
            throw FerryError(
                .limitExceeded,
                "\(app) has \(unfinished) unfinished tasks; with \(new) more it would exceed \(unfinishedTasks) "
                    + "(ferryd --app-max-tasks)"
            )
        }
        guard unacknowledged <= unacknowledgedEvents else {
            throw FerryError(
                .limitExceeded,
                "\(app) has \(unacknowledged) events it has not acknowledged (more than \(unacknowledgedEvents), "
                    + "ferryd --app-max-unacknowledged-events): "
                    + "it creates no task until it fetches and acknowledges them")
        }
    }

    /// One more session for an app that has `open` of them.
    public func admitSession(open: Int, app: String) throws {
        guard open < sessions else {
            throw FerryError(
                .limitExceeded,
                "\(app) has \(open) sessions open, the most it may have (ferryd --app-max-sessions); invalidate one "
                    + "first"
            )
        }
    }
}
