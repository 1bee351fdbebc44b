import FerryCore

/// Settings that apply to every transfer.
public struct TransferSettings: Sendable {
    public var connectTimeoutSeconds: Int = 30
    public var maxRedirects: Int = 10
    public var caInfo: String? = nil
    public init() {}
}
