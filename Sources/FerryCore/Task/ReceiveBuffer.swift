/// How much memory curl receives a transfer's bytes into. Large while few transfers may run:
/// a fast transfer then needs fewer writes for the same bytes. Smaller as more may run at once
/// (ferryd --max-transfers): they share a budget as they share the link, and each buffer is
/// resident as far as one read from the socket reaches into it, which for hundreds of slow
/// transfers was most of the agent's memory (70 KiB a transfer with 512 KiB buffers).
public enum ReceiveBuffer {
    public static let largest = 512 * 1024
    public static let smallest = 16 * 1024
    /// What the buffers of the transfers that may run at once add up to, at most.
    public static let budget = 8 * 1024 * 1024

    /// The buffer of each transfer when `maxTransfers` may run at once (whole pages).
    public static func size(maxTransfers: Int) -> Int {
        max(smallest, min(largest, budget / max(1, maxTransfers)) & ~4095)
    }
}
