import Dispatch

/// A value computed on another thread from the moment it is made; `value()` waits for it.
/// For blocking D-Bus calls whose answer is needed a little later (the next page of a listing).
final class Prefetched<T: Sendable>: @unchecked Sendable {  // `result` is written before `done` signals
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, Error>?
    private var arrived = false  // the waiting side's own note

    init(_ work: @escaping @Sendable () throws -> T) {
        DispatchQueue.global().async { [self] in
            result = Result { try work() }
            done.signal()
        }
    }

    func value() throws -> T {
        if !arrived {
            done.wait()
            arrived = true
        }
        return try result!.get()
    }
}
