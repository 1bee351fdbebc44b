public enum AgentVersion { public static let string = "0.1.0" }
