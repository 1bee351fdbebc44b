/// The core's leave for a fresh download's body to begin before the core has read its head.
///
/// A body waits, paused at its first byte, for the core's `BodyDecision`. For an attempt from
/// byte 0 of a download the core decides the same way every time unless the answer is a range
/// it did not ask for, is content-encoded while curl decodes, or would take the state disk's
/// reserve; so it gives such an attempt this rule with its plan, and the transfer thread applies
/// it at the head: where it allows, the body goes on at once (as `restartFromZero` or `append`
/// would, which are the same on an empty file), and the head reaches the core marked
/// `ResponseHead.wentAhead` with the next report, often in the same batch as the attempt's end.
/// The core still reads that head and decides on it (`RunningTasks.responseBegan`); where it
/// would not have let the body go on, it stops the attempt. A sandboxed app's download gets no
/// leave: its share of the disk depends on its other tasks, which only the core knows.
public struct BodyGoAhead: Sendable, Equatable {
    public var reserve: SpaceReserve
    /// curl decodes a content-encoded answer (an encoded one waits for the core).
    public var decodesContent: Bool

    public init(reserve: SpaceReserve, decodesContent: Bool) {
        self.reserve = reserve
        self.decodesContent = decodesContent
    }

    /// Whether the body of a response with this head may begin before the core decides.
    public func allows(_ head: ResponseHead) -> Bool {
        if decodesContent && ContentCoding.isEncoded(head.contentEncoding) { return false }
        let decision = TaskMachine.bodyDecision(
            status: head.status, contentRangeStart: head.contentRangeStart, requestedOffset: 0)
        if case .reject = decision { return false }
        guard let space = head.stagingSpace else { return false }
        return reserve.refusal(writing: head.totalLength ?? 0, space) == nil
    }
}
