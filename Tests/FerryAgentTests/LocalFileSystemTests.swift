import Testing
@testable import FerryAgent

/// Which staging folders let the loop create files itself (see `Transfers.start`).
@Suite struct LocalFileSystemTests {
    @Test func theDisksOfThisMachineAreLocalAndFileServersAreNot() {
        #expect(LocalFileSystem.isLocal(type: 0xEF53), "ext4")
        #expect(LocalFileSystem.isLocal(type: 0x0102_1994), "tmpfs")
        #expect(!LocalFileSystem.isLocal(type: 0x6969), "NFS")
        #expect(!LocalFileSystem.isLocal(type: 0xFF53_4D42), "CIFS")
        #expect(!LocalFileSystem.isLocal(type: 0xFE53_4D42), "SMB2")
        #expect(!LocalFileSystem.isLocal(type: 0x6573_5546), "FUSE")
        #expect(!LocalFileSystem.isLocal(type: -1), "a folder that could not be examined")
    }

    @Test func aFolderIsExaminedWhereItIs() {
        #expect(LocalFileSystem.holds("/tmp"), "the temporary folder is on a disk of this machine")
        #expect(!LocalFileSystem.holds("/proc/self"), "procfs holds no files of ours")
        #expect(!LocalFileSystem.holds("/tmp/ferry-no-such-folder/staging"))
    }
}
