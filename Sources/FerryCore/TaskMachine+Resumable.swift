import FoundationEssentials

/// The resumable upload protocols the agent speaks. tus 1.0.0 (core protocol and its creation
/// extension, https://tus.io/protocols/resumable-upload): the version sent, in one place.
/// A task's `resumable` is nil until an OPTIONS request found out (the default, automatic).
public enum ResumableProtocol: String, Sendable, Equatable {
    case tus
    /// One plain request each attempt (the server offers nothing, or the app said so).
    case none
    public static let tusVersion = "1.0.0"
}

/// One request of a resumable upload, as a transfer carries it out.
public enum UploadStep: Sendable, Equatable {
    /// OPTIONS to the task's URL: does the server speak tus (Tus-Resumable, with the creation
    /// extension)? Asked once a task, when its protocol is left automatic.
    case discover
    /// POST to the task's URL with the length: the server makes the upload resource (Location).
    case create(length: Int64)
    /// HEAD the upload resource: how many bytes the server has (Upload-Offset).
    case askOffset
    /// PATCH the upload resource with the file from `offset`.
    case send(offset: Int64)
}

/// Resumable uploads (tus): the task's running period is a chain of requests — make the
/// resource (its URL stored before a byte is sent), or ask it for its offset, then send the rest.
extension TaskMachine {
    /// The first request of an attempt: make the resource, or ask the one made before.
    func firstUploadPlan() -> TransferPlan {
        switch record.resumable {
        case nil: return plan(.discover)
        case .none?: return TransferPlan(url: record.url, offset: 0, ifRange: nil, headers: record.headers)
        case .tus?: return record.uploadURL == nil ? plan(.create(length: record.expected ?? 0)) : plan(.askOffset)
        }
    }

    func plan(_ step: UploadStep) -> TransferPlan {
        var headers = record.headers
        headers["Tus-Resumable"] = ResumableProtocol.tusVersion
        switch step {
        case .create(let length): headers["Upload-Length"] = String(length)
        case .askOffset, .discover: break
        case .send(let offset):
            headers["Upload-Offset"] = String(offset)
            headers["Content-Type"] = "application/offset+octet-stream"
        }
        var p = TransferPlan(url: record.uploadURL ?? record.url, offset: 0, ifRange: nil, headers: headers)
        switch step {
        case .discover, .create: p.url = record.url   // asked of the task's URL, not the resource's
        case .askOffset, .send: break
        }
        p.upload = step
        return p
    }

    /// A request of a resumable upload ended. nil: the outcome is the attempt's (a failure to
    /// classify as any, or the last request's success).
    mutating func resumableStepEnded(_ step: UploadStep, _ outcome: TransferOutcome, now: Int64) -> [Action]? {
        let ok = outcome.curlCode == 0 && (200..<300).contains(outcome.httpStatus) && outcome.localErrno == nil
        switch step {
        case .discover:
            // An HTTP error (405, 501…) is an answer too: no tus. A failure to connect is not.
            guard ok || (outcome.curlCode == 22 && outcome.httpStatus >= 400) else { return nil }
            let extensions = (outcome.tusExtensions ?? "").lowercased().split(separator: ",").map { $0.filter { $0 != " " } }
            record.resumable = outcome.tusExtensions != nil && extensions.contains("creation") ? .tus : ResumableProtocol.none
            let first = firstUploadPlan()
            uploadStep = first.upload
            return [.persist, .startTransfer(first)]
        case .create:
            guard ok else { return nil }
            guard let location = outcome.location, let url = URL(string: location, relativeTo: URL(string: record.url)) else {
                return fail(name: "Failed", message: "the server made no upload resource (no Location in its \(outcome.httpStatus) answer)",
                            resumable: false, now: now)
            }
            record.uploadURL = url.absoluteString
            return next(.send(offset: 0))
        case .askOffset:
            if outcome.httpStatus == 404 || outcome.httpStatus == 410 {   // gone (expired): make a new one
                record.uploadURL = nil
                return next(.create(length: record.expected ?? 0))
            }
            guard ok else { return nil }
            guard let offset = outcome.uploadOffset, offset >= 0, offset <= (record.expected ?? .max) else {
                return fail(name: "Failed", message: "the server's upload resource gave no usable Upload-Offset", resumable: false, now: now)
            }
            return next(.send(offset: offset))
        case .send:
            return nil
        }
    }

    /// The next request, at once, in the same running period; the record (its upload URL, the
    /// offset) is stored first.
    private mutating func next(_ step: UploadStep) -> [Action] {
        if case .send(let offset) = step {
            record.received = offset
            lastProgressBytes = offset
        }
        uploadStep = step
        return [.persist, .startTransfer(plan(step))]
    }
}
