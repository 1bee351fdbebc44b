import FerryCore
import Foundation
import Testing

/// The agent splits paths without NSString: the same answers as NSString's path methods.
@Suite struct PathNameTests {
    @Test func folderAndLastNameAgreeWithNSString() {
        for p in ["/a/b/c", "/a/b/", "/a", "/", "a/b", "", "a//b", "/a/b//", "//a", "/home/u/Downloads/report (1).pdf"] {
            #expect(PathName.folder(of: p) == (p as NSString).deletingLastPathComponent, "folder of \(p)")
            #expect(PathName.lastName(of: p) == (p as NSString).lastPathComponent, "last name of \(p)")
        }
        // A bare name (swift-corelibs-foundation's NSString traps on its folder).
        #expect(PathName.folder(of: "a") == "" && PathName.lastName(of: "a") == "a")
    }
}
