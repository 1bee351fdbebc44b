/// A download given a new URL: a fresh signed link for one that expired (S3, Google Drive and
/// GitHub release links carry their own expiry).
extension TaskMachine {
    /// Fetch from `url` (validated, `host` its host) from now on. The bytes on disk stay: the
    /// next attempt asks for the rest with If-Range and the old validator, so the new server
    /// sends the rest only for the same file (206) and the whole of a different one (200),
    /// which starts over and says so (`responseBegan` emits `resumed` at offset 0).
    ///
    /// A URL on another origin gets none of the app's header fields: a credential may hide in
    /// any name (see `HeaderField.forRequest`). A failed or waiting task is queued again; a
    /// running one starts again from its bytes; a paused or scheduled one waits as it did.
    /// Returns whether header fields were dropped, and the actions.
    public mutating func newURL(_ url: String, host: String, now: Int64) throws -> (droppedHeaders: Bool, [Action]) {
        guard record.kind == .download else {
            throw FerryError(
                .invalidState, "task \(record.id) is an upload: only a download can be given a new URL")
        }
        guard record.state != .completed && record.state != .canceled else {
            throw FerryError(
                .invalidState, "task \(record.id) is \(record.state.rawValue) and cannot be given a new URL")
        }
        let dropped = !Origin.same(url, record.url) && !record.headers.isEmpty
        if dropped { record.headers = [:] }
        record.url = url
        record.host = host
        record.updated = now
        switch record.state {
        case .running:
            move(to: .queued, now: now)
            return (dropped, [.stopTransfer, .persist])
        case .failed:
            // As resume does, quarantined bytes (a checksum mismatch) are never continued.
            let discard: [Action] = record.errorName == "ChecksumMismatch" ? [.discardPartial] : []
            move(to: .queued, now: now)
            record.error = nil; record.errorName = nil; record.attempts = 0
            return (dropped, discard + [.persist])
        case .waiting where record.reason != .scheduled:  // a scheduled one still waits for its time
            move(to: .queued, now: now)
            record.error = nil; record.attempts = 0
            return (dropped, [.persist])
        case .queued, .paused, .waiting, .completed, .canceled:
            return (dropped, [.persist])
        }
    }
}
