import FerryBus
import FerryCore
import Logging

/// The agent's part of the settings store (GSettings schema dev.ferry.Agent): what each key
/// means for `AgentSettings`, and a call when one changes. GSettings has already refused values
/// out of the schema's ranges (a hand-edited one reads as its default).
public final class StoredSettings {
    private let store: SettingsStore
    private let log: Logger

    public init(logger: Logger) throws {
        store = try SettingsStore()
        log = logger
    }

    /// Where the settings are kept, for the log.
    public var location: String { store.keyFile ?? "GSettings (\(SettingsStore.schemaID))" }

    public func apply(to s: inout AgentSettings) {
        let folder = store.string(.downloadFolder)
        if folder.hasPrefix("/") {
            s.core.downloadFolder = folder
        } else if !folder.isEmpty {
            log.warning("download-folder '\(folder)' is not an absolute path: using the XDG download folder")
        }
        s.core.maxTotal = Int(store.int(.maxTransfers))
        s.core.maxPerHost = Int(store.int(.maxPerHost))
        s.core.keepEnded = store.int(.keepEndedDays) * 86_400 * 1_000_000
        s.core.allowMetered = store.bool(.allowMetered)
        s.popups = store.bool(.popups)
        s.popupWindowMilliseconds = UInt32(store.int(.popupWindowMs))
        s.core.downloadLimit = store.int(.downloadLimit)
        s.core.uploadLimit = store.int(.uploadLimit)
    }

    /// `changed` after each change, with the key's name (on the loop).
    public func observe(_ changed: @escaping (String) -> Void) { store.observe(changed) }
}
