import CFerryShim
import Glibc

// The agent's own threads and their locks on POSIX threads: it links FoundationEssentials
// only, which has no Thread, NSLock or NSCondition.

/// A mutex.
final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil) }
    deinit { pthread_mutex_destroy(mutex); mutex.deallocate() }
    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// A mutex and a condition to wait for under it.
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil); pthread_cond_init(cond, nil) }
    deinit {
        pthread_cond_destroy(cond); cond.deallocate()
        pthread_mutex_destroy(mutex); mutex.deallocate()
    }
    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Call with the lock held; returns with it held again.
    func wait() { pthread_cond_wait(cond, mutex) }
    func broadcast() { pthread_cond_broadcast(cond) }
}

/// Starts a detached thread named `name` (at most 15 bytes: shown in top, perf, /proc).
func startThread(named name: String, _ body: @escaping () -> Void) {
    final class Start {
        let name: String, body: () -> Void; init(_ n: String, _ b: @escaping () -> Void) { name = n; body = b }
    }
    let start = Unmanaged.passRetained(Start(name, body)).toOpaque()
    var thread = pthread_t()
    let code = pthread_create(
        &thread, nil,
        { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            ferry_name_thread(start.name)
            start.body()
            return nil
        }, start)
    precondition(code == 0, "cannot start the thread \(name): error \(code)")
    pthread_detach(thread)
}
