import CCurl
import CFerryShim
import FerryCore
import Glibc

/// Sessions' cookie stores (a session that asked for cookies): a 0600 file of the state folder
/// per session, and one curl share handle a file, so a session's running transfers see each
/// other's cookies at once (each also reads the file as it starts and writes it as it ends, so
/// they outlive the agent). Used on one transfer thread: a share handle is one thread's, so every
/// transfer with a jar runs on the first (`Transfers.place`).
final class CookieJars {
    private let folder: String
    private var shares: [String: UnsafeMutableRawPointer] = [:]

    init(folder: String) { self.folder = folder }

    /// A transfer reads, shares and writes its session's jar (nil: the session keeps no cookies).
    func attach(_ jar: String?, _ easy: UnsafeMutableRawPointer) {
        guard let jar else { return }
        if shares[jar] == nil {
            mkdir(folder, 0o700)
            // A long session key's jar lies in folders of its own (StateFolder.cookieJar).
            var inner = folder
            for part in jar.dropFirst(folder.count).split(separator: "/").dropLast() {
                inner += part + "/"
                mkdir(inner, 0o700)
            }
            shares[jar] = ferry_cookie_share_new()
        }
        guard let share = shares[jar] else { return }
        ferry_easy_setopt_ptr(easy, CURLOPT_SHARE, share)
        ferry_easy_setopt_str(easy, CURLOPT_COOKIEFILE, jar)
        ferry_easy_setopt_str(easy, CURLOPT_COOKIEJAR, jar)
    }

    /// An invalidated session's cookies: a new session of that name starts without them.
    func forget(_ jar: String) {
        guard let share = shares.removeValue(forKey: jar) else { return }
        _ = curl_share_cleanup(share)  // refused while a transfer still holds it: it goes with the agent
    }
}
