/// The agent's settings, each key spelled once: the GSettings schema dev.ferry.Agent
/// (desktop/dev.ferry.Agent.gschema.xml) is their source, and SettingTests checks that these
/// are its keys with its ranges. The agent's store reads, the Preferences controls and ferryd's
/// flags name them through this; `ferry config` takes the names people type.
public enum Setting: String, CaseIterable, Sendable {
    case downloadFolder = "download-folder"
    case maxTransfers = "max-transfers"
    case maxPerHost = "max-per-host"
    case downloadLimit = "download-limit"
    case uploadLimit = "upload-limit"
    case popups
    case popupWindowMs = "popup-window-ms"
    case keepEndedDays = "keep-ended-days"
    case allowMetered = "allow-metered"

    /// The schema's range of a number (nil for text and switches).
    public var range: ClosedRange<Int64>? {
        switch self {
        case .maxTransfers, .maxPerHost: 1...1000
        case .downloadLimit, .uploadLimit: 0...1_099_511_627_776
        case .popupWindowMs: 0...60_000
        case .keepEndedDays: 0...36_500
        case .downloadFolder, .popups, .allowMetered: nil
        }
    }

    /// "1 to 1000", as a refusal says what is allowed.
    public var allowed: String { range.map { "\($0.lowerBound) to \($0.upperBound)" } ?? "" }
}

extension SettingsStore {
    public func bool(_ s: Setting) -> Bool { bool(s.rawValue) }
    public func int(_ s: Setting) -> Int64 { int(s.rawValue) }
    public func string(_ s: Setting) -> String { string(s.rawValue) }
}
