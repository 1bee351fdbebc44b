import CGLib
import FerryBus
import FerryCore

/// Follows GIO's network monitor (NetworkManager, else netlink). "network-changed" is noisy,
/// so changes are debounced into one callback per second at most.
final class NetworkWatch {
    private let monitor: OpaquePointer?
    private let power: OpaquePointer?
    private var debounce: UInt32 = 0
    var onChange: (NetworkState) -> Void = { _ in }

    init() {
        monitor = g_network_monitor_get_default()
        power = g_power_profile_monitor_dup_default()
        if let power {
            GSignal.connect(UnsafeMutableRawPointer(power), "notify::power-saver-enabled") {
                [weak self] (_: UnsafeMutableRawPointer?) in
                self?.changed()
            }
        }
        guard let monitor else { return }
        GSignal.connect(UnsafeMutableRawPointer(monitor), "network-changed") { [weak self] (_: Bool) in self?.changed()
        }
    }

    var state: NetworkState { NetworkState(available: available, metered: metered, powerSaver: powerSaver) }

    var available: Bool {
        guard let monitor else { return true }
        return g_network_monitor_get_network_available(monitor) != 0
    }

    /// The network is metered (mobile data, a hotspot): sessions may refuse it.
    var metered: Bool {
        guard let monitor else { return false }
        return g_network_monitor_get_network_metered(monitor) != 0
    }

    /// Power saving is on (discretionary sessions wait).
    var powerSaver: Bool {
        guard let power else { return false }
        return g_power_profile_monitor_get_power_saver_enabled(power) != 0
    }

    private func changed() {
        guard debounce == 0 else { return }
        debounce = MainLoop.addTimer(milliseconds: 1_000) { [weak self] in
            guard let self else { return false }
            self.debounce = 0
            self.onChange(self.state)
            return false
        }
    }
}
