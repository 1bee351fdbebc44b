/// What the user and ferryd's options set for the agent's decisions.
extension AgentCore {
    public struct Settings: Sendable {
        /// The state folder (for the names of inboxes and quarantined bytes in messages).
        public var stateDirectory: String
        var state: StateFolder { StateFolder(stateDirectory) }
        public var maxTotal = 6
        public var maxPerHost = 2
        public var backoff = Backoff()
        /// The agent's limit for a silent connection (the core's stall check, not curl's speed
        /// check); a session's request timeout may lower it.
        public var stallSeconds = 60
        /// ferryd --download-dir: wins over a session's default folder.
        public var downloadDirectory: String?
        /// First look at a full disk (or a refusing store) again after this long, µs.
        public var spaceRecheck: Int64 = 30_000_000
        /// Ended tasks leave the list after this long, µs (0: never).
        public var keepEnded: Int64 = 30 * 86_400 * 1_000_000
        /// What one sandboxed app may hold at once.
        public var appLimits = AppLimits()
        /// The user's download folder (the download-folder setting): where a host session's
        /// downloads go when neither the task nor the session names a folder (nil: XDG's).
        public var downloadFolder: String?
        /// The allow-metered setting: off, nothing transfers over a metered network.
        public var allowMetered = true
        /// Free space kept on the disk of the state folder (its store and staging files):
        /// downloads stop and wait for space before they take it.
        public var stateReserve = SpaceReserve()
        /// Bytes per second all downloads together may receive, and all uploads send (0: no limit).
        public var downloadLimit: Int64 = 0
        public var uploadLimit: Int64 = 0
        public init(stateDirectory: String) { self.stateDirectory = stateDirectory }
    }
}
