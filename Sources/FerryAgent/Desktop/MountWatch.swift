import CFerryShim
import CGLib

/// Mounts come and go (a drive plugged in, a share back): GIO's mount monitor, which waits on
/// /proc/self/mountinfo's change events (nothing wakes while nothing is mounted).
final class MountWatch {
    private let monitor: OpaquePointer?
    var onChange: () -> Void = {}

    init() {
        monitor = g_unix_mount_monitor_get()
        guard let monitor else { return }
        let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, user in
            Unmanaged<MountWatch>.fromOpaque(user!).takeUnretainedValue().onChange()
        }
        ferry_signal_connect(UnsafeMutableRawPointer(monitor), "mounts-changed",
                             unsafeBitCast(handler, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque())
    }
}
