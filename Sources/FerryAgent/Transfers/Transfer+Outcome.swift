import FerryCore

/// How an attempt ended, read from the curl handle once curl is done with it: the status, the
/// headers the core reads (a 401's challenge, an upload's answer as its raw fields), the local
/// failure, the proxy.
extension Transfer {
    func outcome(code: Int) -> TransferOutcome {
        var outcome = TransferOutcome(
            curlCode: code, curlMessage: errorMessage,
            httpStatus: httpStatus, retryAfterSeconds: retryAfterSeconds,
            localErrno: localErrno, localMessage: localMessage, bytesThisAttempt: bytesThisAttempt,
            authenticate: httpStatus == 401 ? header("WWW-Authenticate") : proxyAuthenticate)
        (outcome.rejection, outcome.effectiveURL) = (rejection, httpStatus == 401 || isUpload ? effectiveURL : nil)
        outcome.refusedBody = decodedBeyondBound
        // Read only for libcurl's out-of-memory (27): no header look-up on every transfer's end.
        outcome.decodedAnswer = code == 27 && decodes && ContentCoding.isEncoded(header("Content-Encoding"))
        (outcome.replyCut, outcome.replyHeaders) = (reply?.cut ?? false, isUpload ? replyHeaders() : nil)
        if isUpload {  // the core reads what they mean
            for name in TransferOutcome.uploadFieldNames {
                if let value = header(name) { outcome.uploadFields[name.lowercased()] = value }
            }
        }
        if let why = source?.changed() {  // whatever the server said, it got a mix
            outcome.localErrno = UploadSource.changedErrno
            outcome.localMessage =
                "the file to upload changed while it was being sent (\(why)): the server may hold a mix of old and "
                + "new bytes"
        }
        if let proxy = proxy?.printable {
            outcome.proxy = proxy
            outcome.proxyConnectStatus = proxyConnectStatus
            outcome.proxyTunneled = tunneled
        }
        return outcome
    }

    /// Whether the request went inside a tunnel through the proxy: curl asks an HTTP proxy for
    /// a CONNECT tunnel for every https URL (and answers it for none), a SOCKS proxy always.
    private var tunneled: Bool {
        guard let proxy else { return false }
        let scheme = proxy.curlProxy.prefix { $0 != ":" }.lowercased()
        return proxyConnectStatus != 0 || scheme.hasPrefix("socks")
            || (effectiveURL ?? "").lowercased().hasPrefix("https:")
    }

    /// A 407's challenge: from the CONNECT answer (https through the proxy) or the final one
    /// of a request the proxy carried.
    private var proxyAuthenticate: String? {
        guard proxy != nil, proxyConnectStatus == 407 || (httpStatus == 407 && !tunneled) else { return nil }
        return header("Proxy-Authenticate", ofConnect: proxyConnectStatus == 407)
    }
}
