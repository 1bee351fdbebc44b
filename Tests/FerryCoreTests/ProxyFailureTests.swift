import FerryCore
import Testing

/// Failures at the proxy are told apart from the server's, and make the task wait naming it.
struct ProxyFailureTests {
    func outcome(_ code: Int, status: Int = 0, connect: Int = 0, proxy: String? = "http://127.0.0.1:3128") -> TransferOutcome {
        var o = TransferOutcome(curlCode: code, curlMessage: "Failed to connect", httpStatus: status)
        o.proxy = proxy
        o.proxyConnectStatus = connect
        return o
    }

    @Test func theProxysFailuresAreItsOwn() {
        #expect(FailureClassifier.classify(outcome(7)) == .proxy("cannot connect to the proxy http://127.0.0.1:3128 (Failed to connect)"))
        #expect(FailureClassifier.classify(outcome(5)) == .proxy("cannot resolve the proxy http://127.0.0.1:3128 (Failed to connect)"))
        guard case .proxy(let refused) = FailureClassifier.classify(outcome(56, connect: 403)) else { Issue.record("403"); return }
        #expect(refused.contains("refused the tunnel (HTTP 403)"))
        guard case .proxy(let auth) = FailureClassifier.classify(outcome(22, status: 407)) else { Issue.record("407"); return }
        #expect(auth.contains("HTTP 407"))
    }

    @Test func withoutAProxyTheSameCodesAreTheServers() {
        #expect(FailureClassifier.classify(outcome(7, proxy: nil)) == .transient("Failed to connect"))
        // Through a proxy, what the origin answers is still the origin's.
        #expect(FailureClassifier.classify(outcome(22, status: 404)) == .permanent(name: "NotFound", message: "server answered HTTP 404: not found"))
        // 410 is Gone (an expired signed link), under the name scripts know it by.
        #expect(FailureClassifier.classify(outcome(22, status: 410))
                == .permanent(name: "NotFound", message: "server answered HTTP 410: gone (a signed link may have expired)"))
    }

    @Test func theTaskWaitsWithReasonProxyAndRetries() {
        var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "http://h/f", host: "h", state: .queued))
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(outcome(7), backoff: Backoff(baseMilliseconds: 1000, capMilliseconds: 1000, jitter: 0), resourceDeadline: nil,
                                      now: 10, random: 0)
        #expect(m.record.state == .waiting && m.record.reason == .proxy)
        #expect(actions.contains(.scheduleRetry(atMicroseconds: 10 + 1_000_000)))
        #expect(m.retryDue(now: 2_000_000) == [.persist] && m.record.state == .queued)
    }

    /// A 407 asks for the proxy's credentials (the app's challenge, marked proxy; or the user,
    /// for their own tasks) instead of retrying for days; a session nobody answers for keeps
    /// the old wait with reason proxy.
    @Test func aProxyThatWantsCredentialsAsksForThem() {
        let backoff = Backoff(baseMilliseconds: 1000, capMilliseconds: 1000, jitter: 0)
        var asked = outcome(22, status: 407)
        asked.authenticate = "Basic realm=\"office proxy\""
        var m = TaskMachine(TaskRecord(id: 7, session: "s", url: "https://h/f", host: "h", state: .queued))
        _ = m.start(partialBytes: 0, now: 0)
        let actions = m.transferEnded(asked, backoff: backoff, resourceDeadline: nil, now: 10, random: 0, userAnswers: true)
        #expect(m.record.state == .waiting && m.record.reason == .credentials && (m.record.error ?? "").contains("ferry login 7"))
        #expect(actions.contains(.emit(.challenge(scheme: "Basic", realm: "office proxy", host: "127.0.0.1", previousFailures: 0, proxy: true))))
        var quiet = TaskMachine(TaskRecord(id: 8, session: "s", url: "https://h/f", host: "h", state: .queued))
        _ = quiet.start(partialBytes: 0, now: 0)
        _ = quiet.transferEnded(outcome(56, connect: 407), backoff: backoff, resourceDeadline: nil, now: 10, random: 0)
        #expect(quiet.record.reason == .proxy)
    }
}
