/// Text from a server or an app shown to a person (a URL in `ferry list`, a row of the window, a
/// popup): what cannot be seen, or reorders what can, stays visible as its `%XX` escapes.
/// Control characters (C0, C1), format characters (zero-width space, the bidi overrides and
/// isolates: `%E2%80%AE` shows a name backwards), line and paragraph separators, spaces other
/// than ASCII's, private-use and unassigned code points.
public enum VisibleText {
    /// Whether `scalar` is shown as itself.
    public static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value >= 0x20 && scalar.value != 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .privateUse, .surrogate,
            .unassigned:
            // A zero-width joiner and non-joiner shape letters in scripts that need them.
            return scalar.value == 0x200C || scalar.value == 0x200D
        default:
            return true
        }
    }

    /// `text` with every scalar that is not visible written as the `%XX` escapes of its UTF-8.
    public static func escaped(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(isVisible) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isVisible(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { out += "%" + hex(byte >> 4) + hex(byte & 0xF) }
            }
        }
        return out
    }

    private static func hex(_ nibble: UInt8) -> String { String(nibble, radix: 16, uppercase: true) }
}
