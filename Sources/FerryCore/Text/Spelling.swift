/// "Did you mean …?" for a mistyped word (a subcommand): the known word within two edits
/// (insertions, deletions, substitutions, swaps of neighbours), the closest first, as git and
/// cargo suggest.
public enum Spelling {
    public static func suggestion(for word: String, among known: [String]) -> String? {
        let typed = Array(word.lowercased())
        let scored = known.map { ($0, distance(typed, Array($0))) }.filter { $0.1 <= 2 && $0.1 < max(typed.count, 2) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Optimal string alignment distance: a swap of two neighbours ("stauts") costs one.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
