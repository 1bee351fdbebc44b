import Testing
@testable import FerryCore

/// A turn moves its inputs and effects by value through lists: each case that carries a task's
/// record (hundreds of bytes) is boxed, so a wake or a signal in a list stays a few words.
@Suite struct ValueLayoutTests {
    @Test func effectsAndInputsStaySmall() {
        #expect(MemoryLayout<TaskRecord>.size > 256)  // what the boxes keep out of the lists
        #expect(MemoryLayout<AgentEffect>.size <= 64)
        #expect(MemoryLayout<AgentInput>.size <= 64)
    }
}
