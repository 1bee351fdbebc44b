/// Names the agent, the library and the command line share, spelled once.
public enum FerryRelease {
    /// The version of Ferry (agent, library, CLI ship together).
    public static let version = "0.2.0"
    /// The environment variable a relaunched app finds its session identifier in.
    public static let backgroundSessionVariable = "FERRY_BACKGROUND_SESSION"
}
