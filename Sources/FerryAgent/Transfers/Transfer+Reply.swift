import CCurl
import CFerryShim

extension Transfer {
    /// The URL the last answer came from, after redirects.
    var effectiveURL: String? { ferry_easy_info_str(easy, CURLINFO_EFFECTIVE_URL).map { String(cString: $0) } }

    /// The header fields of the last response (after redirects): names in lower case, repeated
    /// ones joined with ", ". Set-Cookie stays out: a credential, not the app's to store here.
    func replyHeaders() -> [String: String] {
        var fields: [String: String] = [:]
        var previous: UnsafeMutablePointer<curl_header>?
        while let h = curl_easy_nextheader(easy, UInt32(CURLH_HEADER), -1, previous) {
            previous = h
            let name = String(cString: h.pointee.name).lowercased()
            guard name != "set-cookie", fields.count < 100 else { continue }
            let value = String(cString: h.pointee.value)
            fields[name] = fields[name].map { $0 + ", " + value } ?? value
        }
        return fields
    }
}
