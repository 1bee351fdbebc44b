import CFerryShim
import FerryCore
import Glibc

/// What the agent's loop asks of a transfer thread (`Carrier`), in the order it asked.
enum CarrierCommand: @unchecked Sendable {  // a `Transfer` made on the staging worker crosses once
    /// Makes the attempt on the carrier (a new, empty staging file on a local disk) and runs it.
    case make(TaskRecord, TaskMachine.TransferPlan, TransferStart)
    /// Runs an attempt the staging worker made.
    case run(Transfer, TransferStart)
    /// The core's decision on the head of an attempt's response.
    case continueBody(task: Int64, attempt: UInt64, TaskMachine.BodyDecision)
    case limitSpeed(task: Int64, bytesPerSecond: Int64)
    /// Detaches the task's transfer (its bytes are synced to disk).
    case stop(task: Int64)
    case setLimits(total: Int, host: Int)
    /// Closes the cached connections, when no transfer runs here.
    case dropConnections
    case forgetCookies(jar: String)
    /// Detaches every transfer and answers with the bytes each has on disk (the agent stops).
    case stopAll(CarrierAnswer<[Int64: Int64]>)
}

/// How an attempt is to run: its number (reports of an attempt the loop has since stopped are
/// dropped there), and what making it takes.
struct TransferStart {
    var attempt: UInt64
    var staging: String
    var credential: Credential?
    var proxy: ProxyChoice?
    /// The session's cookie jar (such a transfer runs on the first carrier: see `CookieJars`).
    var jar: String?
}

/// What a transfer thread tells the loop: an input for the core, of one attempt.
struct CarrierReport: Sendable {
    var task: Int64
    var attempt: UInt64
    var input: AgentInput
}

/// An answer one thread waits for (only as the agent stops: the loop has nothing left to do).
final class CarrierAnswer<Value>: @unchecked Sendable {  // `value` is guarded by `condition`
    private let condition = Condition()
    private var value: Value?

    func give(_ v: Value) {
        condition.lock()
        value = v
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Value {
        condition.lock()
        while value == nil { condition.wait() }
        let v = value!
        condition.unlock()
        return v
    }
}

/// How many transfer threads the agent runs: one fewer than the CPUs it may use (the loop
/// needs one), at least one, at most eight (`FERRY_TRANSFER_THREADS` sets it).
enum CarrierCount {
    static var chosen: Int {
        if let text = getenv("FERRY_TRANSFER_THREADS"), let n = Int(String(cString: text)), n > 0 { return min(n, 64) }
        return max(1, min(8, Int(ferry_usable_cpus()) - 1))
    }
}
