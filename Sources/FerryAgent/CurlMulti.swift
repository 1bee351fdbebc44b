import CCurl
import CFerryShim
import CGLib
import Glibc

/// libcurl's multi *socket* interface driven by GLib: one fd watch per socket curl asks for
/// and a single timer. When nothing transfers, no source exists and the loop sleeps.
final class CurlMulti {
    private(set) var multi: UnsafeMutableRawPointer
    private let limits: (total: Int, host: Int)
    /// Called for each finished easy handle, after curl returned (so it may remove handles).
    var onDone: (UnsafeMutableRawPointer, CURLcode) -> Void = { _, _ in }
    /// Called after each round of socket work, before finished transfers are reported.
    var afterAction: () -> Void = {}
    /// Wraps each round (socket work, then its reports): the agent makes it one turn.
    var around: (() -> Void) -> Void = { $0() }

    private var watches: [Int32: UInt32] = [:]   // socket -> GLib source id
    /// True while curl runs its callbacks (loop thread only). The store and the bus assert it is
    /// false: inside curl only bytes move, every decision waits until curl returned.
    static var insideCurl = false
    private var timer: UInt32 = 0

    init(maxTotalConnections: Int, maxHostConnections: Int) {
        limits = (maxTotalConnections, maxHostConnections)
        multi = curl_multi_init()
        configure()
    }

    private func configure() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        ferry_multi_set_socket(multi, CurlMulti.socketCallback, me)
        ferry_multi_set_timer(multi, CurlMulti.timerCallback, me)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.total)
        ferry_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.host)
        // curl sizes its idle-connection cache from the handles attached at the moment; with
        // transfers ending and starting one by one it closes connections the next task could
        // use (76 connections for 400 small files at 16 at once). A fixed cache keeps them.
        ferry_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(64, limits.total * 4))
    }

    /// Closes every cached connection (they may run over a network that is gone) by starting
    /// over with a new multi handle. Only while no transfer is attached.
    func dropConnections() {
        for (_, id) in watches { g_source_remove(id) }
        watches.removeAll()
        if timer != 0 { g_source_remove(timer); timer = 0 }
        let old = multi
        multi = curl_multi_init()
        configure()
        curl_multi_cleanup(old)
    }

    deinit {
        for (_, id) in watches { g_source_remove(id) }
        if timer != 0 { g_source_remove(timer) }
        curl_multi_cleanup(multi)
    }

    func add(_ easy: UnsafeMutableRawPointer) {
        curl_multi_add_handle(multi, easy)   // curl arms its timer; the work starts from the loop
    }

    /// Removes a handle (pause/cancel/done). Never call from inside a curl callback.
    func remove(_ easy: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, easy)
    }

    // MARK: curl -> GLib

    private static let socketCallback: ferry_socket_fn = { _, fd, what, user, _ in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.updateWatch(fd: fd, what: what)
        return 0
    }

    private static let timerCallback: ferry_timer_fn = { _, timeoutMs, user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.updateTimer(timeoutMs)
        return 0
    }

    private func updateWatch(fd: Int32, what: Int32) {
        if let id = watches.removeValue(forKey: fd) { g_source_remove(id) }
        guard what != CURL_POLL_REMOVE else { return }
        var cond: UInt32 = 0
        if what & CURL_POLL_IN != 0 { cond |= G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue }
        if what & CURL_POLL_OUT != 0 { cond |= G_IO_OUT.rawValue | G_IO_ERR.rawValue }
        let me = Unmanaged.passUnretained(self).toOpaque()
        watches[fd] = g_unix_fd_add_full(G_PRIORITY_DEFAULT, fd, GIOCondition(cond), CurlMulti.fdReady, me, nil)
    }

    private func updateTimer(_ timeoutMs: Int) {
        // Every new value replaces the previous timer; -1 deletes it.
        if timer != 0 { g_source_remove(timer); timer = 0 }
        guard timeoutMs >= 0 else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        timer = g_timeout_add_full(G_PRIORITY_DEFAULT, UInt32(timeoutMs), CurlMulti.timerFired, me, nil)
    }

    // MARK: GLib -> curl

    private static let fdReady: GUnixFDSourceFunc = { fd, condition, user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        var flags: Int32 = 0
        let c = condition.rawValue
        if c & (G_IO_IN.rawValue | G_IO_HUP.rawValue) != 0 { flags |= CURL_CSELECT_IN }
        if c & G_IO_OUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
        if c & (G_IO_ERR.rawValue | G_IO_NVAL.rawValue) != 0 { flags |= CURL_CSELECT_ERR }
        me.action(socket: fd, flags: flags)
        // Keep the source; if curl removed or replaced it meanwhile, GLib has already dropped it.
        return 1
    }

    private static let timerFired: GSourceFunc = { user in
        let me = Unmanaged<CurlMulti>.fromOpaque(user!).takeUnretainedValue()
        me.timer = 0   // cleared first: socket_action may arm a new one
        me.action(socket: CURL_SOCKET_BAD, flags: 0)
        return 0
    }

    private func action(socket: Int32, flags: Int32) {
        around { [self] in
            var running: Int32 = 0
            Self.insideCurl = true
            curl_multi_socket_action(multi, socket, flags, &running)
            Self.insideCurl = false
            afterAction()
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            while ferry_multi_next_done(multi, &easy, &result) != 0, let e = easy {
                onDone(e, result)
            }
        }
    }
}
