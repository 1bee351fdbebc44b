/// How one attempt of a transfer ended, as the I/O shell saw it.
public struct TransferOutcome: Sendable, Equatable {
    /// libcurl's CURLcode (0 = OK).
    public var curlCode: Int
    public var curlMessage: String
    /// The last HTTP status (0 = none received).
    public var httpStatus: Int
    public var retryAfterSeconds: Int64?
    /// errno of a failed local write (disk full, …), when the shell aborted the write.
    public var localErrno: Int32?
    /// The shell's own words for that local failure (e.g. which disk is full).
    public var localMessage: String?
    /// Body bytes this attempt wrote.
    public var bytesThisAttempt: Int64
    /// The WWW-Authenticate header of a 401 answer.
    public var authenticate: String?
    /// The URL the last answer came from (after redirects), for a 401 and an upload's steps:
    /// the origin that asked for credentials, the base of a Location.
    public var effectiveURL: String?
    /// Why the shell refused the response's body (a byte range other than the one asked for).
    public var rejection: String?
    /// Why the body was refused for good (decoded past `ContentCoding`'s bound).
    public var refusedBody: String?
    /// curl was decoding the answer (it came content-encoded).
    public var decodedAnswer = false
    /// The agent stopped the attempt after this many seconds without a byte (its stall watch;
    /// curl's own speed check is off).
    public var stalledSeconds: Int64?
    /// The proxy the attempt went through, without credentials (nil: direct).
    public var proxy: String?
    /// The proxy's answer to CONNECT (0: no tunnel asked for, or no answer).
    public var proxyConnectStatus: Int = 0
    /// The request went inside a tunnel through the proxy (CONNECT for https, or SOCKS): its
    /// answer is the server's, and only the CONNECT answer is the proxy's.
    public var proxyTunneled = false
    /// The proxy answered 407: to CONNECT, or to a plain request it carried. A 407 from inside
    /// a tunnel is the server's (a server can say anything, "Corporate proxy" included).
    public var asksProxyCredentials: Bool {
        proxy != nil && (proxyConnectStatus == 407 || (httpStatus == 407 && !proxyTunneled))
    }
    /// An upload's reply was longer than `TaskRecord.replyLimit`: the rest was dropped.
    public var replyCut = false
    /// An upload's reply: its header fields (see `TaskRecord.replyHeaders`).
    public var replyHeaders: [String: String]?
    /// An upload's answer: the header fields of `uploadFieldNames` the server sent, by lower-case
    /// name, as they came. What they mean (tus 1.0, the IETF draft) is read here, in the core
    /// (TransferOutcome+Upload), not by the shell that hands them over.
    public var uploadFields: [String: String] = [:]

    /// The attempt never started: the staging file could not be opened or its space claimed.
    public static func localFailure(errno: Int32, message: String) -> TransferOutcome {
        TransferOutcome(curlCode: 0, curlMessage: message, httpStatus: 0, localErrno: errno, localMessage: message)
    }

    /// The agent stopped an attempt whose bytes would not leave the state disk's reserve free.
    public static func noSpace(_ message: String, bytesThisAttempt: Int64) -> TransferOutcome {
        TransferOutcome(
            curlCode: 0, curlMessage: message, httpStatus: 0, localErrno: 28 /* ENOSPC */, localMessage: message,
            bytesThisAttempt: bytesThisAttempt)
    }

    /// The agent stopped an attempt that moved no byte for `seconds`.
    public static func stalled(seconds: Int64, bytesThisAttempt: Int64) -> TransferOutcome {
        var o = TransferOutcome(
            curlCode: 0, curlMessage: "no data for \(seconds) s: the transfer stalled", httpStatus: 0,
            bytesThisAttempt: bytesThisAttempt)
        o.stalledSeconds = seconds
        return o
    }

    public init(
        curlCode: Int, curlMessage: String = "", httpStatus: Int, retryAfterSeconds: Int64? = nil,
        localErrno: Int32? = nil, localMessage: String? = nil, bytesThisAttempt: Int64 = 0,
        authenticate: String? = nil
    ) {
        self.localMessage = localMessage
        self.authenticate = authenticate
        self.curlCode = curlCode; self.curlMessage = curlMessage; self.httpStatus = httpStatus
        self.retryAfterSeconds = retryAfterSeconds; self.localErrno = localErrno
        self.bytesThisAttempt = bytesThisAttempt
    }
}

extension TransferOutcome {
    /// The attempt never reached the server (no name resolution, no route, no connection):
    /// with the network gone, that is a reason to wait for it rather than to count a retry.
    public var neverReachedServer: Bool {
        bytesThisAttempt == 0 && httpStatus == 0 && (stalledSeconds != nil || [5, 6, 7, 28].contains(curlCode))
    }
}

/// What an outcome means for the task: the one place where curl codes and HTTP statuses
/// are sorted into "try again" and "give up".
public enum FailureClass: Sendable, Equatable {
    case success
    case transient(String)  // retry with backoff
    case diskFull(String)  // wait for space, retry later
    case rangeRejected(String)  // the server refused our Range: restart from zero
    case proxy(String)  // the proxy refused or could not be reached: retry with backoff
    case permanent(name: String, message: String)
}

public enum FailureClassifier {
    // CURLcode values (stable numbers from curl.h).
    static let transientCurl: Set<Int> = [5, 6, 7, 16, 18, 28, 52, 55, 56, 92]
    static let tlsCurl: Set<Int> = [35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91]

    public static func classify(_ o: TransferOutcome) -> FailureClass {
        if o.stalledSeconds != nil { return .transient(o.curlMessage) }
        if let e = o.localErrno {
            if e == 28 /* ENOSPC */ || e == 122 /* EDQUOT */ {
                return .diskFull(o.localMessage ?? "no space left on the disk holding the download")
            }
            if e == 116 /* ESTALE: the shell's mark for an upload's file that changed */ {
                return .permanent(name: "FileChanged", message: o.localMessage ?? "the file to upload changed")
            }
            // The shell's own words when it has them (which file, which operation).
            return .permanent(
                name: "Failed", message: o.localMessage ?? "cannot write the download: \(describeErrno(e))")
        }
        if let why = o.refusedBody { return .permanent(name: "Failed", message: why) }
        if o.curlCode == 27, o.decodedAnswer {
            // CURLE_OUT_OF_MEMORY: libcurl decoded more from one read than it holds while the
            // transfer waits for the core's decision on the body (64 MiB in libcurl 7.88).
            return .permanent(name: "Failed", message: ContentCoding.boundMessage(decodedBeyondBufferOf: o.curlMessage))
        }
        if let why = o.rejection { return .rangeRejected(why) }
        if let p = o.proxy, let why = proxyFailure(o, p) { return .proxy(why) }
        if o.curlCode == 0 {
            if o.httpStatus == 416 { return .rangeRejected("server answered 416 Range Not Satisfiable") }
            if (200..<300).contains(o.httpStatus) { return .success }
            return classifyStatus(o)
        }
        if o.curlCode == 22 { return classifyStatus(o) }  // CURLE_HTTP_RETURNED_ERROR
        if o.curlCode == 33 { return .rangeRejected("server refused the byte range") }  // CURLE_RANGE_ERROR
        if transientCurl.contains(o.curlCode) {
            return .transient(o.curlMessage.isEmpty ? "network error (curl \(o.curlCode))" : o.curlMessage)
        }
        if tlsCurl.contains(o.curlCode) {
            return .permanent(name: "TLSError", message: "TLS failure: \(o.curlMessage)")
        }
        if o.curlCode == 47 { return .permanent(name: "TooManyRedirects", message: "too many redirects") }
        if o.curlCode == 1 {
            return .permanent(
                name: "UnsupportedScheme", message: "redirected to an unsupported protocol: \(o.curlMessage)")
        }
        if o.curlCode == 3 { return .permanent(name: "InvalidURL", message: "malformed URL: \(o.curlMessage)") }
        return .permanent(
            name: "Failed", message: o.curlMessage.isEmpty ? "transfer failed (curl \(o.curlCode))" : o.curlMessage)
    }

    /// The words for an attempt that failed at its proxy `p`, nil when the proxy was not the
    /// trouble. Through a proxy, curl connects to nobody else: a failed resolve or connect is
    /// the proxy's; so are a refused CONNECT and a 407.
    static func proxyFailure(_ o: TransferOutcome, _ p: String) -> String? {
        let detail = o.curlMessage.isEmpty ? "" : " (\(o.curlMessage))"
        switch o.curlCode {
        case 5: return "cannot resolve the proxy \(p)\(detail)"
        case 7: return "cannot connect to the proxy \(p)\(detail)"
        case 97: return "the proxy \(p) failed\(detail)"  // CURLE_PROXY: a SOCKS or HTTPS-proxy handshake
        default: break
        }
        if o.asksProxyCredentials {
            return "the proxy \(p) wants credentials it was not given or refused them (HTTP 407)"
        }
        if o.proxyConnectStatus >= 300 { return "the proxy \(p) refused the tunnel (HTTP \(o.proxyConnectStatus))" }
        return nil
    }

    static func classifyStatus(_ o: TransferOutcome) -> FailureClass {
        let s = o.httpStatus
        if s == 416 { return .rangeRejected("server answered 416 Range Not Satisfiable") }
        if s == 408 || s == 425 || s == 429 || (500..<600).contains(s) && s != 501 && s != 505 {
            return .transient("server answered HTTP \(s)")
        }
        if s == 401 || s == 407 {
            return .permanent(
                name: "AuthenticationRequired", message: "server answered HTTP \(s): authentication required")
        }
        if s == 404 { return .permanent(name: "NotFound", message: "server answered HTTP 404: not found") }
        if s == 410 {  // NotFound still: scripts know 410 under that name
            return .permanent(
                name: "NotFound",
                message: "server answered HTTP 410: gone (a signed link may have expired)")
        }
        return .permanent(name: "HTTPError", message: "server answered HTTP \(s)")
    }

    static func describeErrno(_ e: Int32) -> String {
        switch e {
        case 13: return "permission denied"
        case 30: return "read-only file system"
        case 5: return "input/output error"
        default: return "errno \(e)"
        }
    }
}
