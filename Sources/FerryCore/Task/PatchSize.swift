/// How many bytes one request of a resumable upload sends (a tus PATCH, an IETF draft append).
/// Bounded, because servers and the proxies in front of them cap a request's body (nginx's
/// `client_max_body_size` is 1 MiB by default, aiohttp's `client_max_size` too) and because a
/// server that reads a request whole before it stores it keeps nothing of one cut short.
/// Sized for the link: it starts at 4 MiB and doubles after each request that took under a
/// second, up to 64 MiB (few requests on a fast link, at most about two seconds of sending
/// lost on a slow one); a 413 halves it and it never grows past that again (a 400, once: see
/// `refusedWithBadRequest`).
public struct PatchSize: Sendable, Equatable {
    public static let first: Int64 = 4 << 20
    public static let largest: Int64 = 64 << 20
    public static let smallest: Int64 = 64 << 10
    /// A request that took less than this lets the next be larger (µs).
    static let quick: Int64 = 1_000_000

    /// What the next request may send.
    public private(set) var current: Int64 = first
    /// Never larger than this (half of what a server refused as too large).
    public private(set) var ceiling: Int64 = largest
    /// The largest request a server took.
    public private(set) var largestTaken: Int64 = 0
    /// A 400 made the requests smaller once (`refusedWithBadRequest`).
    public private(set) var halvedForBadRequest = false

    public init() {}

    /// A request sent `length` bytes in `micros` and the server took them.
    public mutating func took(_ length: Int64, micros: Int64) {
        largestTaken = max(largestTaken, length)
        guard length >= current, micros < Self.quick else { return }
        current = min(current * 2, ceiling)
    }

    /// The server refused a request of `length` bytes as too large (413). False when the
    /// requests cannot get smaller.
    public mutating func refused(_ length: Int64) -> Bool {
        guard length > Self.smallest else { return false }
        ceiling = max(Self.smallest, min(ceiling, length / 2))
        current = ceiling
        return true
    }

    /// The server answered 400 to a request of `length` bytes, larger than any it took: some
    /// cap a body that way (Django's DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB) instead of with 413.
    /// Halved once; false when that was tried, or the size cannot be why.
    public mutating func refusedWithBadRequest(_ length: Int64) -> Bool {
        guard !halvedForBadRequest, length > largestTaken else { return false }
        halvedForBadRequest = true
        return refused(length)
    }
}
