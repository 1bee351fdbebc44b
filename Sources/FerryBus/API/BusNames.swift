/// The agent's address on the session bus.
public enum BusNames {
    public static let agent = "dev.ferry.Agent1"
    public static let path = "/dev/ferry/Agent1"
    public static let interface = "dev.ferry.Agent1"
}
