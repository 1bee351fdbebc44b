/// The agent's address on the session bus.
public enum BusNames {
    public static let agent = "dev.ferry.Agent1"
    public static let path = "/dev/ferry/Agent1"
    public static let interface = "dev.ferry.Agent1"
    /// The session of the user's own downloads (`ferry download`, the Downloads window).
    public static let cliSession = "dev.ferry.cli"
    /// The session of the downloads the browser extension hands over (ferry-browser-host).
    public static let browserSession = "dev.ferry.browser"
}
