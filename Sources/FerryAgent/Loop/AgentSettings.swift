import Glibc
import FerryCore

/// The agent's settings, one type from the command line (`ferryd`'s options fill it once) to
/// the core, which reads its part (`core`) as it is.
public struct AgentSettings: Sendable {
    /// What the core decides with: the state folder, limits, retries, stalls, retention.
    public var core = AgentCore.Settings(stateDirectory: Paths.defaultStateDirectory)
    /// What every transfer is set up with: timeouts, TLS, the state disk's reserve.
    public var transfer = TransferSettings()
    /// What CreateUploadFromFd may copy into the state folder.
    public var uploadCopies = UploadCopyLimits()
    /// Global popup switch (sessions may also opt out).
    public var popups = true
    /// Downloads ending within this window share one popup.
    public var popupWindowMilliseconds: UInt32 = 1_000
    /// The mode of a finished download (from the umask the agent was started with).
    public var deliveredFileMode: mode_t = 0o600
    public init() {}

    public var stateDirectory: String { core.stateDirectory }
}
