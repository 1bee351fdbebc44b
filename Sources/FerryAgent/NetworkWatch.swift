import CFerryShim
import CGLib

/// Follows GIO's network monitor (NetworkManager, else netlink). "network-changed" is noisy,
/// so changes are debounced into one callback per second at most.
final class NetworkWatch {
    private let monitor: OpaquePointer?
    private var debounce: UInt32 = 0
    var onChange: (Bool) -> Void = { _ in }

    init() {
        monitor = g_network_monitor_get_default()
        guard let monitor else { return }
        let handler: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, _, user in
            Unmanaged<NetworkWatch>.fromOpaque(user!).takeUnretainedValue().changed()
        }
        ferry_signal_connect(UnsafeMutableRawPointer(monitor), "network-changed",
                             unsafeBitCast(handler, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque())
    }

    var available: Bool {
        guard let monitor else { return true }
        return g_network_monitor_get_network_available(monitor) != 0
    }

    private func changed() {
        guard debounce == 0 else { return }
        debounce = MainLoop.addTimer(milliseconds: 1_000) { [weak self] in
            guard let self else { return false }
            self.debounce = 0
            self.onChange(self.available)
            return false
        }
    }
}
