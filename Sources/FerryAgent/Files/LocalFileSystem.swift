import CFerryShim

/// Whether a folder is on a file system that keeps its data on this machine. There, creating a
/// small file costs what the store's own writes cost (20–40 µs on ext4), and the loop makes
/// those already; on NFS, SMB or FUSE one open(2) is a round trip to a server that may not
/// answer, so work there stays off the loop.
enum LocalFileSystem {
    /// statfs(2)'s f_type of the local file systems (linux/magic.h); any other is treated as remote.
    static let localTypes: Set<Int> = [
        0xEF53,  // ext2, ext3, ext4
        0x5846_5342,  // xfs
        0x9123_683E,  // btrfs
        0x0102_1994,  // tmpfs
        0xF2F5_2010,  // f2fs
        0xCA45_1A4E,  // bcachefs
        0x2FC1_2FC1,  // zfs
        0x794C_7630,  // overlayfs (containers)
    ]

    static func isLocal(type: Int) -> Bool { localTypes.contains(type) }

    /// False too when the folder cannot be examined.
    static func holds(_ path: String) -> Bool {
        isLocal(type: ferry_file_system_type(path))
    }
}
