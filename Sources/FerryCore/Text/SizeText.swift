/// Sizes as people type them for limits: "500K", "2M", "1.5G", "750000" (bytes). K, M and G
/// are powers of 1024, as in curl's --limit-rate and wget's --limit-rate; "KB", "KiB" and "k"
/// mean the same.
public enum SizeText {
    public static func bytes(_ text: String) -> Int64? {
        // "2.0 MiB/s", as a rate is shown, reads back too: a space before the unit is dropped.
        var chars = Array(text.trimmingSpaces.lowercased())
        chars.indices.reversed().forEach { i in
            if chars[i] == " " || chars[i] == "\u{00A0}", i + 1 < chars.count, chars[i + 1].isLetter {
                chars.remove(at: i)
            }
        }
        var t = Substring(String(chars))
        if t.hasSuffix("/s") { t = t.dropLast(2) }
        if t.hasSuffix("ib") { t = t.dropLast(2) } else if t.hasSuffix("b") { t = t.dropLast() }
        var scale: Double = 1
        if let unit = t.last, let power = ["k": 1, "m": 2, "g": 3, "t": 4][unit] {
            scale = Double(1 << (10 * power))
            t = t.dropLast()
        }
        guard !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let n = Double(t) else {
            return nil
        }
        let v = (n * scale).rounded()
        guard v >= 0, v < 9.2e18 else { return nil }
        return Int64(v)
    }
}
