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
        let folder = store.string("download-folder")
        if folder.hasPrefix("/") {
            s.core.downloadFolder = folder
        } else if !folder.isEmpty {
            log.warning("download-folder '\(folder)' is not an absolute path: using the XDG download folder")
        }
        s.core.maxTotal = Int(store.int("max-transfers"))
        s.core.maxPerHost = Int(store.int("max-per-host"))
        s.core.keepEnded = store.int("keep-ended-days") * 86_400 * 1_000_000
        s.core.allowMetered = store.bool("allow-metered")
        s.popups = store.bool("popups")
        s.popupWindowMilliseconds = UInt32(store.int("popup-window-ms"))
        s.transfer.downloadLimit = store.int("download-limit")
        s.transfer.uploadLimit = store.int("upload-limit")
    }

    /// `changed` after each change, with the key's name (on the loop).
    public func observe(_ changed: @escaping (String) -> Void) { store.observe(changed) }
}
