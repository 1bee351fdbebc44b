import CGLib
import FerryBus

/// Mounts come and go (a drive plugged in, a share back): GIO's mount monitor, which waits on
/// /proc/self/mountinfo's change events (nothing wakes while nothing is mounted).
final class MountWatch {
    private let monitor: OpaquePointer?
    var onChange: () -> Void = {}

    init() {
        monitor = g_unix_mount_monitor_get()
        guard let monitor else { return }
        GSignal.connect(UnsafeMutableRawPointer(monitor), "mounts-changed") { [weak self] in self?.onChange() }
    }
}
