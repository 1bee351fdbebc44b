import CCurl
import CFerryShim
import CGLib
import Glibc

/// libcurl's multi *socket* interface driven by GLib, on a transfer thread's context. curl's
/// sockets go into one epoll set and GLib watches only that set's descriptor, plus a single
/// timer: a wake-up costs the sockets that are ready, not all of them (GLib polls every
/// descriptor it watches, every iteration: a third of the time with 500 slow transfers). When
/// nothing transfers, no timer is armed and the epoll set is empty, so the thread sleeps.
final class CurlMulti {
    /// The GLib context curl's sources are on (its thread's).
    let context: OpaquePointer
    private(set) var multi: UnsafeMutableRawPointer
    private var limits: (total: Int, host: Int)
    /// Called for each finished easy handle, after curl returned (so it may remove handles).
    var onDone: (UnsafeMutableRawPointer, CURLcode) -> Void = { _, _ in }
    /// Called after each round of socket work, before finished transfers are reported.
    var afterAction: () -> Void = {}
    /// Wraps each round (socket work, then its reports).
    var around: (() -> Void) -> Void = { $0() }

    /// True while curl runs its callbacks on the calling thread. The store and the bus assert it
    /// is false: inside curl only bytes move, every decision waits for the agent's loop.
    static var insideCurl: Bool { ferry_inside_curl() != 0 }
    private var epoll: Int32 = -1
    private var epollSource: UInt32 = 0
    private var timer: UInt32 = 0

    init(context: OpaquePointer, maxTotalConnections: Int, maxHostConnections: Int) {
        self.context = context
        limits = (maxTotalConnections, maxHostConnections)
        multi = curl_multi_init()
        configure()
    }

    private func configure() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        epoll = ferry_epoll_new()
        epollSource = ContextSource.fd(in: context, epoll, G_IO_IN, CurlMulti.epollReady, me)
        ferry_multi_set_socket(multi, CurlMulti.socketCallback, me)
        ferry_multi_set_timer(multi, CurlMulti.timerCallback, me)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.total)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.host)
        ferry_multi_setopt_long(multi, CURLMOPT_PIPELINING, 2)  // CURLPIPE_MULTIPLEX (curl's default, said once)
        // curl sizes its idle-connection cache from the handles attached at the moment; with
        // transfers ending and starting one by one it closes connections the next task could
        // use (76 connections for 400 small files at 16 at once). A fixed cache keeps them.
        ferry_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(64, limits.total * 4))
    }

    /// New limits (the user changed the settings): connections already open stay.
    func setLimits(total: Int, host: Int) {
        limits = (total, host)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, total)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, host)
    }

    private func teardown() {
        ContextSource.remove(epollSource, in: context)
        ContextSource.remove(timer, in: context)
        (epollSource, timer) = (0, 0)
        if epoll >= 0 { close(epoll); epoll = -1 }
    }

    /// Closes every cached connection (they may run over a network that is gone) by starting
    /// over with a new multi handle. Only while no transfer is attached.
    func dropConnections() {
        teardown()
        let old = multi
        multi = curl_multi_init()
        configure()
        curl_multi_cleanup(old)
    }

    deinit {
        teardown()
        curl_multi_cleanup(multi)
    }

    func add(_ easy: UnsafeMutableRawPointer) {
        curl_multi_add_handle(multi, easy)  // curl arms its timer; the work starts from the loop
    }

    /// Lets curl start what was just added now, in this loop callback, instead of on the next
    /// iteration through its zero timer (a request of a new transfer leaves one iteration sooner).
    /// Never from inside a curl callback.
    func kick() {
        guard timer != 0 else { return }
        ContextSource.remove(timer, in: context)
        timer = 0
        round { socketAction(CURL_SOCKET_BAD, 0) }
    }

    /// Unpauses a transfer's receiving: curl hands over the bytes it held within this call;
    /// what remains runs on its zero timer. Never from inside a curl callback.
    func resume(_ easy: UnsafeMutableRawPointer) {
        ferry_set_inside_curl(1)
        curl_easy_pause(easy, 0)  // CURLPAUSE_CONT (a macro Swift cannot import)
        ferry_set_inside_curl(0)
    }

    /// Removes a handle (pause/cancel/done). Never call from inside a curl callback.
    func remove(_ easy: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, easy)
    }

    // MARK: curl -> epoll, GLib

    private static let socketCallback: ferry_socket_fn = { _, fd, what, user, _ in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        _ = ferry_epoll_watch(me.epoll, fd, what)
        return 0
    }

    private static let timerCallback: ferry_timer_fn = { _, timeoutMs, user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.updateTimer(timeoutMs)
        return 0
    }

    private func updateTimer(_ timeoutMs: Int) {
        // Every new value replaces the previous timer; -1 deletes it.
        ContextSource.remove(timer, in: context)
        timer = 0
        guard timeoutMs >= 0 else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        timer = ContextSource.timer(in: context, milliseconds: UInt32(timeoutMs), CurlMulti.timerFired, me)
    }

    // MARK: GLib -> curl

    private static let epollReady: GUnixFDSourceFunc = { _, _, user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.socketsReady()
        return 1
    }

    private static let timerFired: GSourceFunc = { user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.timer = 0  // cleared first: socket_action may arm a new one
        me.round { me.socketAction(CURL_SOCKET_BAD, 0) }
        return 0
    }

    /// Every ready socket, in one round (one turn of the agent).
    private func socketsReady() {
        var fds = [Int32](repeating: 0, count: 64), flags = [Int32](repeating: 0, count: 64)
        let n = Int(ferry_epoll_ready(epoll, &fds, &flags, 64))
        guard n > 0 else { return }
        round { for i in 0..<n { socketAction(fds[i], flags[i]) } }
    }

    private func socketAction(_ socket: Int32, _ flags: Int32) {
        var running: Int32 = 0
        ferry_set_inside_curl(1)
        curl_multi_socket_action(multi, socket, flags, &running)
        ferry_set_inside_curl(0)
    }

    /// Socket work, then what it did: bytes and headers first, then finished transfers.
    private func round(_ work: () -> Void) {
        around { [self] in
            work()
            afterAction()
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            while ferry_multi_next_done(multi, &easy, &result) != 0, let e = easy {
                onDone(e, result)
            }
        }
    }
}
