import FoundationEssentials

/// The resumable upload protocols the agent speaks, their versions in one place:
/// - tus 1.0.0, core protocol and creation extension (https://tus.io/protocols/resumable-upload);
/// - the IETF draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload, drafts
///   -09 to -15: interop version 8; header Upload-Draft-Interop-Version).
/// A task's `resumable` is nil until an OPTIONS request found out (the default, automatic).
public enum ResumableProtocol: String, Sendable, Equatable {
    case tus
    /// The IETF draft, careful creation: an empty request with Upload-Complete: ?0 makes the
    /// upload resource (its URL stored before a byte is sent), PATCHes send the file.
    case ietf
    /// Plain requests that invite the server to make them resumable (the draft's optimistic
    /// creation: Upload-Complete: ?1); a 104 interim answer with a Location turns the task `ietf`.
    case upgrade
    /// One plain request each attempt (the app said so).
    case none
    public static let tusVersion = "1.0.0"
    public static let ietfInteropVersion = "8"
}

/// One request of a resumable upload, as a transfer carries it out.
public enum UploadStep: Sendable, Equatable {
    /// OPTIONS to the task's URL: does the server speak tus (Tus-Version, or Tus-Resumable, with
    /// the creation extension) or the IETF draft (Accept-Patch with application/partial-upload)? Asked once
    /// a task, when its protocol is left automatic.
    case discover
    /// An empty request to the task's URL with the length: the server makes the upload resource
    /// (Location). `method`: POST for tus, the task's own for the IETF draft.
    case create(length: Int64, method: String)
    /// HEAD the upload resource: how many bytes the server has (Upload-Offset).
    case askOffset
    /// PATCH the upload resource with `length` bytes of the file from `offset` (PatchSize).
    case send(offset: Int64, length: Int64)
}

/// Resumable uploads: the task's running period is a chain of requests — make the resource
/// (its URL stored before a byte is sent), or ask it for its offset, then send the rest.
extension TaskMachine {
    /// The first request of an attempt: make the resource, or ask the one made before.
    func firstUploadPlan() -> TransferPlan {
        switch record.resumable {
        case nil: return plan(.discover)
        case .none?, .upgrade?:
            guard record.uploadURL == nil else { return plan(.askOffset) }  // a 104 named one: .ietf soon
            return TransferPlan(url: record.url, offset: 0, ifRange: nil, headers: plainHeaders())
        case .tus?, .ietf?:
            return record.uploadURL == nil
                ? plan(.create(length: record.expected ?? 0, method: createMethod)) : plan(.askOffset)
        }
    }

    private var createMethod: String { record.resumable == .tus ? "POST" : record.effectiveMethod }

    /// A plain upload's headers; under `upgrade` they invite the server to make it resumable.
    private func plainHeaders() -> [String: String] {
        var headers = record.headers
        if record.resumable == .upgrade {
            headers["Upload-Draft-Interop-Version"] = ResumableProtocol.ietfInteropVersion
            headers["Upload-Complete"] = "?1"
            if let length = record.expected { headers["Upload-Length"] = String(length) }
        }
        return headers
    }

    func plan(_ step: UploadStep) -> TransferPlan {
        var headers = record.headers
        let ietf = record.resumable != .tus
        var url = record.uploadURL ?? record.url
        switch step {
        case .discover:  // OPTIONS to the task's URL asks; it claims no protocol
            url = record.url
        case .create(let length, _):  // made at the task's URL, not the resource's
            url = record.url
            headers["Upload-Length"] = String(length)
            if ietf { headers["Upload-Complete"] = "?0" } else { headers["Upload-Metadata"] = tusMetadata }
        case .askOffset:
            break
        case .send(let offset, let length):
            headers["Upload-Offset"] = String(offset)
            headers["Content-Type"] = ietf ? "application/partial-upload" : "application/offset+octet-stream"
            if ietf { headers["Upload-Complete"] = offset + length >= (record.expected ?? 0) ? "?1" : "?0" }
        }
        if step == .discover {
            // Servers ignore it on OPTIONS, and some answer with their tus headers only when it is there.
            headers["Tus-Resumable"] = ResumableProtocol.tusVersion
        } else if ietf {
            headers["Upload-Draft-Interop-Version"] = ResumableProtocol.ietfInteropVersion
        } else {
            headers["Tus-Resumable"] = ResumableProtocol.tusVersion
        }
        // An upload resource on another origin gets the bytes (as a 307 would) with the
        // protocol's fields, never a field the app set.
        var p = TransferPlan(
            url: url, offset: 0, ifRange: nil, headers: HeaderField.forRequest(headers, to: url, taskURL: record.url))
        p.upload = step
        return p
    }

    /// tus's Upload-Metadata: the file's name and type, as tus clients send them (some servers,
    /// tuspyserver among them, refuse to answer for an upload made without them).
    private var tusMetadata: String {
        let name = record.uploadFile.map { String($0.split(separator: "/").last ?? "upload") } ?? "upload"
        let type = record.headers.first { $0.key.lowercased() == "content-type" }?.value ?? "application/octet-stream"
        return "filename \(Data(name.utf8).base64EncodedString()),filetype \(Data(type.utf8).base64EncodedString())"
    }

    /// A 104 (Upload Resumption Supported) interim answer named the upload resource while a
    /// plain request under `upgrade` was sending: from now on the task resumes there.
    mutating func resourceAnnounced(_ location: String) -> [Action] {
        guard record.state == .running, uploadStep == nil, record.resumable == .upgrade,
            let url = URL(string: location, relativeTo: URL(string: record.url)),
            !Self.downgrades(record.url, to: url.absoluteString)  // the plain request goes on over https
        else { return [] }
        record.resumable = .ietf
        record.uploadURL = url.absoluteString
        return [.persist]
    }

    /// A request of a resumable upload ended. nil: the outcome is the attempt's (a failure to
    /// classify as any, or the last request's success).
    mutating func resumableStepEnded(_ step: UploadStep, _ outcome: TransferOutcome, now: Int64) -> [Action]? {
        let ok = outcome.curlCode == 0 && (200..<300).contains(outcome.httpStatus) && outcome.localErrno == nil
        switch step {
        case .discover:
            // An HTTP error (405, 501…) is an answer too: no protocol. A failure to connect is not,
            // but a server that never answers OPTIONS is asked a few times only (discoveryGivesUp).
            guard ok || (outcome.curlCode == 22 && outcome.httpStatus >= 400) else {
                guard discoveryGivesUp(outcome) else { return nil }
                record.resumable = .upgrade
                let first = firstUploadPlan()
                uploadStep = first.upload
                return [.persist, .startTransfer(first)]
            }
            record.resumable = Self.discovered(outcome)
            discoveryDoubt = Self.tusDoubt(outcome, found: record.resumable)
            if record.resumable == .tus, let max = outcome.tusMaxSize, let size = record.expected, size > max {
                return fail(
                    name: "Failed",
                    message:
                        "the server takes uploads of at most \(max) bytes (its Tus-Max-Size); this file is \(size) "
                        + "bytes",
                    resumable: false, now: now)
            }
            let first = firstUploadPlan()
            uploadStep = first.upload
            return [.persist, .startTransfer(first)]
        case .create:
            guard ok else { return nil }
            guard let location = outcome.location,
                let url = URL(string: location, relativeTo: URL(string: outcome.effectiveURL ?? record.url))
            else {
                return fail(
                    name: "Failed",
                    message: "the server made no upload resource (no Location in its \(outcome.httpStatus) answer)",
                    resumable: false, now: now)
            }
            if Self.downgrades(record.url, to: url.absoluteString) {
                let origin = Origin(url.absoluteString)?.description ?? "http"
                return fail(
                    name: "UnsupportedScheme",
                    message:
                        "the server named an upload resource on plain http (\(origin)) for an https upload: refused, "
                        + "the file would travel unencrypted",
                    resumable: false, now: now)
            }
            record.uploadURL = url.absoluteString
            return send(from: 0, now: now)
        case .askOffset:
            if outcome.httpStatus == 404 || outcome.httpStatus == 410 {  // gone (expired): make a new one
                record.uploadURL = nil
                if record.resumable == .upgrade { record.resumable = .ietf }
                return next(.create(length: record.expected ?? 0, method: createMethod), now: now)
            }
            guard ok else { return nil }
            guard let offset = outcome.uploadOffset, offset >= 0, offset <= (record.expected ?? .max) else {
                return fail(
                    name: "Failed", message: "the server's upload resource gave no usable Upload-Offset",
                    resumable: false, now: now)
            }
            if outcome.uploadComplete == true, record.resumable != .tus {
                // It has every byte and answered the last request, but that answer was lost:
                // the draft has no way to ask for it again. The task is done, with no reply.
                record.received = offset
                return nil
            }
            return send(from: offset, now: now)
        case .send(let sent, let length):
            // 409: the server's offset is not ours; it says which (the draft requires it).
            if outcome.httpStatus == 409, let offset = outcome.uploadOffset, offset != sent, offset >= 0,
                offset <= (record.expected ?? .max)
            {
                return send(from: offset, now: now)
            }
            // Too large for the server (or a proxy before it): smaller requests, from its offset.
            if outcome.httpStatus == 413, patchSize.refused(length) { return next(.askOffset, now: now) }
            // Some say so with 400 (Django's 2.5 MB cap): smaller ones, once, if the size may be why.
            if outcome.httpStatus == 400, patchSize.refusedWithBadRequest(length) { return next(.askOffset, now: now) }
            guard ok else { return nil }
            patchSize.took(length, micros: now - stepStartedAt)
            let reached = outcome.uploadOffset ?? sent + length
            if outcome.uploadOffset != nil { record.received = reached }  // what the server has
            guard let size = record.expected, reached < size else { return nil }  // the last: the attempt's answer
            guard reached > sent || length == 0 else {
                let why =
                    "the server took none of \(length) bytes sent at offset \(sent) (its Upload-Offset stayed "
                    + "\(reached))"
                return fail(
                    name: "Failed", message: why,
                    resumable: false, now: now)
            }
            return send(from: reached, now: now)
        }
    }

    /// Whether a request of a task at `taskURL` to `url` would be less protected: https to
    /// anything else.
    static func downgrades(_ taskURL: String, to url: String) -> Bool {
        taskURL.lowercased().hasPrefix("https:") && !url.lowercased().hasPrefix("https:")
    }

    /// The next request, at once, in the same running period; the record (its upload URL, the
    /// offset) is stored first.
    private mutating func next(_ step: UploadStep, now: Int64) -> [Action] {
        if case .send(let offset, _) = step {
            record.received = offset
            lastProgressBytes = offset
        }
        uploadStep = step
        stepStartedAt = now
        return [.persist, .startTransfer(plan(step))]
    }

    /// A PATCH of the file from `offset`, as large as PatchSize allows.
    private mutating func send(from offset: Int64, now: Int64) -> [Action] {
        next(
            .send(offset: offset, length: min(patchSize.current, max(0, (record.expected ?? .max) - offset))), now: now)
    }
}
