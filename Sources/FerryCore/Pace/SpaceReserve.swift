/// How much of the state folder's disk the agent keeps free for itself: staging a download
/// must never fill the disk that holds the store, or no state change could be committed.
public struct SpaceReserve: Sendable, Equatable {
    /// At least this much stays free…
    public var minimumBytes: Int64
    /// …or this fraction of the disk, whichever is more.
    public var fraction: Double

    public init(minimumBytes: Int64 = 64 << 20, fraction: Double = 0.01) {
        self.minimumBytes = minimumBytes; self.fraction = fraction
    }

    public func reserve(totalBytes: Int64) -> Int64 { max(minimumBytes, Int64(Double(totalBytes) * fraction)) }

    /// May `bytes` more be written to a disk with `available` of `total` bytes free?
    public func allows(writing bytes: Int64, available: Int64, total: Int64) -> Bool {
        available - max(bytes, 0) >= reserve(totalBytes: total)
    }

    /// Why staging stops, for the task's `error`.
    public func refusal(available: Int64, total: Int64) -> String {
        "the disk holding Ferry's state folder is nearly full: \(Self.mebibytes(available)) free, "
            + "\(Self.mebibytes(reserve(totalBytes: total))) are kept free for the agent's records"
    }

    /// Whether a download may go on writing to a disk with `space` free: its `remaining` bytes
    /// (those announced and not on disk yet, 0 for a body of unknown length) leave the reserve.
    /// The refusal, for the task's `error`, when not.
    public func refusal(writing remaining: Int64, _ space: DiskSpace) -> String? {
        allows(writing: remaining, available: space.available, total: space.total)
            ? nil : refusal(available: space.available, total: space.total)
    }

    /// A sandboxed app's share of the state disk: half of what staging may use there (the free
    /// space past the reserve, with what the app holds counted back in), so one app's paused
    /// downloads can never leave the user's waiting for space.
    public func appShare(holding: Int64, _ space: DiskSpace) -> Int64 {
        max(0, space.available + holding - reserve(totalBytes: space.total)) / 2
    }

    /// Why an app's download waits: `holding` staged (and promised) by its others, `more` for
    /// this one, past its share. nil: within it.
    public func appRefusal(app: String, holding: Int64, more: Int64, _ space: DiskSpace) -> String? {
        let share = appShare(holding: holding, space)
        guard holding + more > share else { return nil }
        return "\(app)'s downloads hold \(Self.mebibytes(holding)) in Ferry's state folder and this one needs "
            + "\(Self.mebibytes(more)) more: past the app's share (\(Self.mebibytes(share))); it waits until the app's "
            + "others finish or are canceled"
    }

    public static func mebibytes(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}

/// A disk's free space as the shell measured it (statvfs: what an unprivileged writer may use).
public struct DiskSpace: Sendable, Equatable {
    public var available: Int64
    public var total: Int64
    public init(available: Int64, total: Int64) { self.available = available; self.total = total }
}
