import CCurl
import CFerryShim
import FerryCore
import Glibc

extension UploadStep {
    /// The byte a `send` starts at.
    var sendOffset: Int64? { if case .send(let offset, _) = self { offset } else { nil } }
}

extension Transfer {
    /// The upload resource a 104 (Upload Resumption Supported) interim answer named, once: the
    /// IETF draft's optimistic creation. curl keeps 1xx headers apart from the final answer's.
    func takeAnnouncedResource() -> String? {
        guard awaitsResource else { return nil }
        var h: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(easy, "Location", 0, UInt32(CURLH_1XX), -1, &h) == CURLHE_OK, let h else { return nil }
        awaitsResource = false
        return String(cString: h.pointee.value)
    }

    /// The method and body of one request of a resumable upload; its headers are in the
    /// plan. A `send` reads the file from its offset.
    func setUploadStep(_ step: UploadStep) {
        switch step {
        case .discover:
            ferry_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, "OPTIONS")
        case .create(_, let method):
            ferry_easy_setopt_long(easy, CURLOPT_POST, 1)
            ferry_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
            if method != "POST" { ferry_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, method) }
        case .askOffset:
            ferry_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        case .send(let offset, let length):
            let size = Int64(lseek(fd, 0, SEEK_END))
            let count = max(0, min(length, size - offset))
            sendBody(from: offset, count: count)
            ferry_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
            ferry_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(count))
            ferry_easy_setopt_str(easy, CURLOPT_CUSTOMREQUEST, "PATCH")
        }
    }
}
