/// What a resumable upload's answer says, read from its raw header fields (`uploadFields`):
/// the resource made and the bytes it has (tus 1.0 and the IETF draft), and what an OPTIONS
/// answer offers. Each can be set too (tests, and answers made by hand), as the field it reads.
extension TransferOutcome {
    /// The fields the shell hands over of an upload's answer.
    public static let uploadFieldNames = [
        "Location", "Upload-Offset", "Tus-Version", "Tus-Resumable", "Tus-Extension", "Tus-Max-Size", "Accept-Patch",
        "Upload-Complete",
    ]

    /// The resource made (Location).
    public var location: String? {
        get { uploadFields["location"] }
        set { uploadFields["location"] = newValue }
    }

    /// The bytes the resource has (Upload-Offset; nil when absent or not a number).
    public var uploadOffset: Int64? {
        get { uploadFields["upload-offset"].flatMap { Int64($0) } }
        set { uploadFields["upload-offset"] = newValue.map { String($0) } }
    }

    /// An OPTIONS answer speaks tus when it has Tus-Version (or Tus-Resumable, which some
    /// servers send instead, though tus 1.0 leaves it out of OPTIONS answers).
    private var speaksTus: Bool { uploadFields["tus-version"] != nil || uploadFields["tus-resumable"] != nil }

    /// A tus answer's Tus-Extension list ("" when none); nil for an answer that is not tus.
    public var tusExtensions: String? {
        get { speaksTus ? uploadFields["tus-extension"] ?? "" : nil }
        set {
            if let newValue {
                if !speaksTus { uploadFields["tus-version"] = "1.0.0" }
                uploadFields["tus-extension"] = newValue
            } else {
                for name in ["tus-version", "tus-resumable", "tus-extension"] { uploadFields[name] = nil }
            }
        }
    }

    /// A tus answer's Tus-Max-Size.
    public var tusMaxSize: Int64? {
        get { speaksTus ? uploadFields["tus-max-size"].flatMap { Int64($0) } : nil }
        set { uploadFields["tus-max-size"] = newValue.map { String($0) } }
    }

    /// An OPTIONS answer's Accept-Patch (the IETF draft: application/partial-upload).
    public var acceptPatch: String? {
        get { uploadFields["accept-patch"] }
        set { uploadFields["accept-patch"] = newValue }
    }

    /// The IETF draft's Upload-Complete (a structured boolean; nil: absent or not one).
    public var uploadComplete: Bool? {
        get { ["?1": true, "?0": false][uploadFields["upload-complete"] ?? ""] }
        set { uploadFields["upload-complete"] = newValue.map { $0 ? "?1" : "?0" } }
    }
}
