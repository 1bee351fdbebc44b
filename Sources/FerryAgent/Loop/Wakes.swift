import FerryCore

/// The GLib sources behind the core's wakes: at most one pending per kind. Nothing armed,
/// no source: an idle agent never wakes up.
final class Wakes {
    private var sources: [AgentWake: UInt32] = [:]
    var fired: (AgentWake) -> Void = { _ in }

    /// Fires at `at` (µs since the epoch), or when the loop is idle (nil); replaces a pending one.
    func arm(_ wake: AgentWake, at: Int64?) {
        cancel(wake)
        let body: () -> Bool = { [weak self] in
            self?.sources[wake] = nil
            self?.fired(wake)
            return false
        }
        if let at {
            let ms = max(0, (at - MainLoop.now + 999) / 1_000)
            sources[wake] = MainLoop.addTimer(milliseconds: UInt32(clamping: ms), body)
        } else {
            sources[wake] = MainLoop.addIdle(body)
        }
    }

    func cancel(_ wake: AgentWake) {
        if let id = sources.removeValue(forKey: wake) { MainLoop.cancel(id) }
    }
}
