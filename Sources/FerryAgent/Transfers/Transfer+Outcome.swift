import FerryCore

/// How an attempt ended, read from the curl handle once curl is done with it: the status, the
/// headers the core reads (a 401's challenge, an upload's resource and offset, discovery's
/// answers), the local failure, the proxy.
extension Transfer {
    func outcome(code: Int) -> TransferOutcome {
        var outcome = TransferOutcome(
            curlCode: code, curlMessage: errorMessage,
            httpStatus: httpStatus, retryAfterSeconds: retryAfterSeconds,
            localErrno: localErrno, localMessage: localMessage, bytesThisAttempt: bytesThisAttempt,
            authenticate: httpStatus == 401 ? header("WWW-Authenticate") : proxyAuthenticate)
        (outcome.rejection, outcome.effectiveURL) = (rejection, httpStatus == 401 || isUpload ? effectiveURL : nil)
        (outcome.replyCut, outcome.replyHeaders) = (reply?.cut ?? false, isUpload ? replyHeaders() : nil)
        if isUpload {
            (outcome.location, outcome.uploadOffset) = (
                header("Location"), header("Upload-Offset").flatMap { Int64($0) }
            )
            // tus 1.0: an OPTIONS answer must carry Tus-Version; Tus-Resumable is not for OPTIONS.
            if header("Tus-Version") != nil || header("Tus-Resumable") != nil {
                (outcome.tusExtensions, outcome.tusMaxSize) = (
                    header("Tus-Extension") ?? "", header("Tus-Max-Size").flatMap { Int64($0) }
                )
            }
            (outcome.acceptPatch, outcome.uploadComplete) = (
                header("Accept-Patch"), ["?1": true, "?0": false][header("Upload-Complete") ?? ""]
            )
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
        }
        return outcome
    }

    /// A 407's challenge: from the CONNECT answer (https through the proxy) or the final one.
    private var proxyAuthenticate: String? {
        guard proxy != nil, proxyConnectStatus == 407 || httpStatus == 407 else { return nil }
        return header("Proxy-Authenticate", ofConnect: proxyConnectStatus == 407)
    }
}
