import FerryBus
import FerryCore

/// Who calls one of dev.ferry.Agent1's methods, as the bus says.
struct CallContext {
    let caller: Caller
    let sender: String
}
