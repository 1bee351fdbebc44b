import FerryBus
import Testing

/// The one byte-size formatter the CLI and the window share (GLib's g_format_size).
struct ByteSizeTests {
    /// GLib keeps number and unit together with a no-break space.
    @Test func sizesReadAsGNOMEShowsThem() {
        #expect(ByteSize.text(0) == "0 bytes")
        #expect(ByteSize.text(1) == "1 byte")
        #expect(ByteSize.text(999) == "999 bytes")
        #expect(ByteSize.text(16_400) == "16.4\u{00A0}kB")
        #expect(ByteSize.text(2_000_000) == "2.0\u{00A0}MB")
        #expect(ByteSize.text(-5) == "0 bytes")
    }
}
