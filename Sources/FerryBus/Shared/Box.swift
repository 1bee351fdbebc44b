import CGLib

/// A Swift value handed to C as `user_data` (GLib sources and signals, spawn callbacks): the one
/// box for every callback the agent, the library and the CLI give to C. Handed retained, with a
/// destroy notify that releases it, wherever C may call back after the Swift side is gone
/// (signals of shared objects, timers, a GObject's data); a closure or `Weak` inside keeps the
/// object from being kept alive. An unretained pointer to `self` is left only where the C
/// object belongs to that Swift object and is freed in its deinit (a curl handle, an sd-bus
/// connection, a GSource it owns), so no callback can outlive it.
public final class Box<T> {
    public var value: T
    public init(_ value: T) { self.value = value }

    /// A retained pointer for C, balanced by `Box.release` (a GDestroyNotify) or `take`.
    public static func retained(_ value: T) -> UnsafeMutableRawPointer { Unmanaged.passRetained(Box(value)).toOpaque() }
    public static func unretained(_ value: Box<T>) -> UnsafeMutableRawPointer {
        Unmanaged.passUnretained(value).toOpaque()
    }
    /// The value behind a pointer C handed back (the box stays alive).
    public static func peek(_ p: UnsafeMutableRawPointer) -> T {
        Unmanaged<Box<T>>.fromOpaque(p).takeUnretainedValue().value
    }
    /// The value behind a retained pointer, releasing it (a one-shot callback).
    public static func take(_ p: UnsafeMutableRawPointer) -> T {
        Unmanaged<Box<T>>.fromOpaque(p).takeRetainedValue().value
    }
    /// Releases a pointer from `retained` whatever its type (GLib's destroy notify).
    public static var release: GDestroyNotify { { p in Unmanaged<AnyObject>.fromOpaque(p!).release() } }
}

/// A weak reference for a box: C may call back after the object is gone, and then finds nil.
public final class Weak<T: AnyObject> {
    public weak var object: T?
    public init(_ object: T) { self.object = object }
}
