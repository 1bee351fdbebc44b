import CGLib

/// A Swift value handed to C as `user_data` (GLib sources and signals, spawn callbacks): the one
/// box for every callback the agent, the library and the CLI give to C.
public final class Box<T> {
    public var value: T
    public init(_ value: T) { self.value = value }

    /// A retained pointer for C, balanced by `Box.release` (a GDestroyNotify) or `take`.
    public static func retained(_ value: T) -> UnsafeMutableRawPointer { Unmanaged.passRetained(Box(value)).toOpaque() }
    public static func unretained(_ value: Box<T>) -> UnsafeMutableRawPointer { Unmanaged.passUnretained(value).toOpaque() }
    /// The value behind a pointer C handed back (the box stays alive).
    public static func peek(_ p: UnsafeMutableRawPointer) -> T { Unmanaged<Box<T>>.fromOpaque(p).takeUnretainedValue().value }
    /// The value behind a retained pointer, releasing it (a one-shot callback).
    public static func take(_ p: UnsafeMutableRawPointer) -> T { Unmanaged<Box<T>>.fromOpaque(p).takeRetainedValue().value }
    /// Releases a pointer from `retained` whatever its type (GLib's destroy notify).
    public static var release: GDestroyNotify { { p in Unmanaged<AnyObject>.fromOpaque(p!).release() } }
}
