/// A file path's folder and last name, as NSString's path methods give them (the agent links
/// FoundationEssentials only, which has no NSString): trailing slashes are ignored.
public enum PathName {
    /// "/a/b/c" → "/a/b"; "/a" → "/"; "a" → "".
    public static func folder(of path: String) -> String {
        let s = withoutTrailingSlashes(path[...])
        guard let slash = s.lastIndex(of: "/") else { return "" }
        if slash == s.startIndex { return "/" }
        return String(withoutTrailingSlashes(s[..<slash]))
    }

    /// "/a/b/c" → "c"; "/" → "/".
    public static func lastName(of path: String) -> String {
        let s = withoutTrailingSlashes(path[...])
        guard s != "/", let slash = s.lastIndex(of: "/") else { return String(s) }
        return String(s[s.index(after: slash)...])
    }

    private static func withoutTrailingSlashes(_ s: Substring) -> Substring {
        var s = s
        while s.utf8.count > 1, s.hasSuffix("/") { s = s.dropLast() }
        return s
    }
}
