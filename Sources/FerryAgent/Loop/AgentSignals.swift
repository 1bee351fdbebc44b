import Dispatch
import FerryCore

/// What the agent tells its bus layer (`BusService` sets them); the last argument of each is
/// the sandboxed app the signal is about ("" = the host's).
struct AgentSignals {
    var eventsAvailable: (String, UInt64, String) -> Void = { _, _, _ in }
    var taskChanged: (Int64, TaskState, String) -> Void = { _, _, _ in }
    var tasksRemoved: ([Int64], String) -> Void = { _, _ in }
    var tasksProgressed: ([TaskProgress], String) -> Void = { _, _ in }
    var launcherChanged: () -> Void = {}
}

/// The desktop the agent talks to besides the bus: popups, the keyring, the network and the
/// mounted file systems.
struct DesktopLinks {
    let notifier: Notifier
    let keyring: Keyring
    let network = NetworkWatch()
    let mounts = MountWatch()
}

/// The threads that do file work off the loop: checksums, fsyncs and moves of finished files,
/// removals (`files`), and the copies of descriptors handed over for upload, one queue an owner.
struct FileWorkers {
    let files = DispatchQueue(label: "dev.ferry.agent.files")
    let uploadCopiers = UploadCopy.Queues()
}
