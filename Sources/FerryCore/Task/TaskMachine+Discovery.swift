/// Automatic discovery of a resumable upload protocol (one OPTIONS request), and what is said
/// when it found none where a server may still speak one.
extension TaskMachine {
    /// OPTIONS requests a server may leave unanswered before the upload itself is tried.
    static let discoveryTries = 3

    /// What an OPTIONS answer says the server speaks.
    static func discovered(_ outcome: TransferOutcome) -> ResumableProtocol {
        if outcome.tusExtensions != nil, list(outcome.tusExtensions).contains("creation") { return .tus }
        if list(outcome.acceptPatch).contains(where: { $0.hasPrefix("application/partial-upload") }) { return .ietf }
        return .upgrade
    }

    private static func list(_ value: String?) -> [String] {
        (value ?? "").lowercased().split(separator: ",").map { $0.filter { $0 != " " } }
    }

    /// An OPTIONS request the server took and gave no usable answer to (its handler crashed: an
    /// empty reply, a reset): after `discoveryTries` of them the upload itself is tried (true).
    /// Counted by the task's attempts: each such probe was retried as a failed attempt.
    mutating func discoveryGivesUp(_ outcome: TransferOutcome) -> Bool {
        let unanswered = [8, 18, 52, 56].contains(outcome.curlCode)  // weird, partial, empty, reset
        guard unanswered, record.attempts + 1 >= Self.discoveryTries else { return false }
        discoveryDoubt = "its OPTIONS request got no answer \(Self.discoveryTries) times (\(outcome.curlMessage))"
        return true
    }

    /// An answer that names tus without offering it as tus 1.0 asks (Tus-Resumable, but its
    /// Tus-Version and Tus-Extension elsewhere, as drf-tus puts them in a JSON body).
    static func tusDoubt(_ outcome: TransferOutcome, found: ResumableProtocol?) -> String? {
        guard found == .upgrade, outcome.uploadFields["tus-resumable"] != nil else { return nil }
        return "its OPTIONS answer has Tus-Resumable but no Tus-Extension field offering creation, as tus 1.0 asks"
    }

    /// Said after a failed upload left automatic: why the agent sent it plainly, and that the
    /// protocol can be forced; "" when nothing suggests tus.
    func discoveryHint(_ outcome: TransferOutcome) -> String {
        guard record.kind == .upload, record.resumable == .upgrade else { return "" }
        guard
            let doubt = discoveryDoubt
                ?? (outcome.uploadFields["tus-resumable"] != nil
                    ? "its answer has Tus-Resumable" : nil)
        else { return "" }
        return " (sent as a plain upload: \(doubt); if the server speaks tus, `--resumable tus`, the option "
            + "resumable=tus, forces it)"
    }
}
