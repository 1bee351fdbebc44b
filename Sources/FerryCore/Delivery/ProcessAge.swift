/// Whether the process now at a bus connection's pid can be the one that opened it. The bus
/// records the pid when the connection is made; if that process exits while a child keeps the
/// connection, another process may get the pid. A process that started after the agent saw the
/// connection (or, for a connection older than the agent, after the agent began watching the
/// bus) is certainly such a newcomer: the agent trusts nothing about it.
public enum ProcessAge {
    /// Both in clock ticks since boot (the unit of /proc/PID/stat's start time). Truncated to
    /// ticks, a process that started before the connection was seen is never judged newer.
    public static func mayHaveOpened(startedAt processStart: UInt64, connectionSeenAt seen: UInt64) -> Bool {
        processStart <= seen
    }

    /// The start time in /proc/PID/stat: field 22, counted after the command name's closing
    /// parenthesis (the name itself may hold spaces and parentheses).
    public static func startTicks(stat: String) -> UInt64? {
        guard let close = stat.utf8.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat.utf8[stat.utf8.index(after: close)...].split(separator: UInt8(ascii: " "))
        // After ")": state is field 3, so start time (22) is the 20th.
        guard fields.count >= 20 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }
}
