import CCurl
import CFerryShim
import FerryCore

/// How a transfer's curl handle is set up: the request (URL, range, headers, method, body),
/// TLS, timeouts and redirects, credentials, and the callbacks that move the bytes.
extension Transfer {
    /// Whether making this attempt touches nothing but a new, empty staging file: a download
    /// from the start, with no preallocation (no upload's file, no truncation, no fallocate).
    static func onlyCreatesStaging(_ r: TaskRecord, _ plan: TaskMachine.TransferPlan) -> Bool {
        r.kind != .upload && plan.offset == 0 && (r.expected ?? 0) < StagingWriter.preallocateFrom
    }

    func configure(plan: TaskMachine.TransferPlan, settings: TransferSettings) {
        ferry_easy_setopt_str(easy, CURLOPT_URL, plan.url)
        ferry_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        ferry_easy_setopt_long(easy, CURLOPT_MAXREDIRS, settings.maxRedirects)
        ferry_easy_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        ferry_easy_setopt_str(easy, CURLOPT_REDIR_PROTOCOLS_STR, plan.httpsRedirectsOnly ? "https" : "http,https")
        ferry_easy_setopt_long(easy, CURLOPT_FAILONERROR, 1)
        ferry_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        ferry_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, plan.receiveBuffer)
        ferry_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, settings.connectTimeoutSeconds)
        ferry_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        // HTTP/2 where the server offers it (ALPN, so https only): a transfer waits for a
        // connection being set up to the same host and multiplexes on it, instead of opening
        // its own. Not for plain http: curl cannot learn there that the server will not
        // multiplex, and a second transfer waited for the first's answer to end (a stall when
        // the first is slow).
        if plan.url.lowercased().hasPrefix("https:") { ferry_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1) }
        if let proxy {
            // Credentials in the proxy's URL are curl's to use (any scheme it knows), never logged.
            ferry_easy_setopt_str(easy, CURLOPT_PROXY, proxy.curlProxy)
            if proxy.carriesCredentials || plan.proxyCredential != nil {
                ferry_easy_setopt_long(easy, CURLOPT_PROXYAUTH, Self.anyAuth)
            }
            // An answer to the proxy's 407 wins over credentials in the proxy's URL.
            if let c = plan.proxyCredential {
                ferry_easy_setopt_str(easy, CURLOPT_PROXYUSERNAME, c.user)
                ferry_easy_setopt_str(easy, CURLOPT_PROXYPASSWORD, c.password)
            }
        }
        ferry_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1)
        ferry_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2)
        if let ca = settings.caInfo { ferry_easy_setopt_str(easy, CURLOPT_CAINFO, ca) }
        ferry_easy_setopt_str(easy, CURLOPT_USERAGENT, "ferry/\(FerryRelease.version)")
        ferry_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        if plan.offset > 0 {
            ferry_easy_setopt_str(easy, CURLOPT_RANGE, "\(plan.offset)-")
        }
        // Asks for the file as it is (lengths known, ranges in its bytes); what a server
        // encodes anyway curl decodes (any coding it has), unless the core keeps the bytes.
        if plan.decodesContent { ferry_easy_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, "identity") }
        decodes = plan.decodesContent
        goAhead = plan.goAhead
        // Checked again here: a task stored by an older agent may carry what is refused now.
        var headers = plan.headers.filter { HeaderField.isValidName($0.key) && HeaderField.isValidValue($0.value) }
            .map { "\($0.key): \($0.value)" }
        if plan.offset > 0, let validator = plan.ifRange, HeaderField.isValidValue(validator) {
            headers.append("If-Range: \(validator)")
        }
        // A file is bytes: not curl's form encoding for a POST, unless the app names a type.
        if isUpload, !plan.headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers.append("Content-Type: application/octet-stream")
        }
        awaitsResource = isUpload && plan.upload == nil && plan.headers["Upload-Complete"] != nil
        for h in headers { headerList = curl_slist_append(headerList, h) }
        if headerList != nil { ferry_easy_setopt_ptr(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        ferry_easy_setopt_ptr(easy, CURLOPT_PRIVATE, me)
        ferry_easy_set_write(easy, Transfer.writeCallback, me)
    }

    /// CURLAUTH_ANY: every bit but CURLAUTH_DIGEST_IE (curl.h's casts do not import).
    static let anyAuth = Int(bitPattern: ~UInt(16))

    /// The task's credentials (from the keyring or a challenge's answer, memory only), with every
    /// scheme curl knows (Basic, Digest, NTLM, Negotiate): curl asks the server which it wants and
    /// finishes the rounds itself, so only a final 401 reaches the agent. Only with credentials:
    /// a handle that allows NTLM makes curl look through every idle connection to the host for
    /// one bound to the same user (a liveness poll each) instead of taking the first.
    func authenticate(_ credential: Credential?) {
        guard let credential else { return }
        ferry_easy_setopt_long(easy, CURLOPT_HTTPAUTH, Self.anyAuth)
        ferry_easy_setopt_str(easy, CURLOPT_USERNAME, credential.user)
        ferry_easy_setopt_str(easy, CURLOPT_PASSWORD, credential.password)
    }

    /// The request's method, and for an upload its body: the file, read by `readCallback`.
    func setMethod(_ method: String) {
        if isUpload {
            let size = Int64(lseek(fd, 0, SEEK_END))
            sendBody(from: 0)
            if method == "POST" {
                ferry_easy_setopt_long(easy, CURLOPT_POST, 1)
                ferry_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size))
            } else {
                ferry_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
                ferry_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
                if method != "PUT" { ferry_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, method) }
            }
        } else if method == "POST" {
            ferry_easy_setopt_long(easy, CURLOPT_POST, 1)
            ferry_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
        }
    }
}
