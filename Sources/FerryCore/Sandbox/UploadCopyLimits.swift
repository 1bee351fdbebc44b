/// How much CreateUploadFromFd may copy into the agent's state folder: a descriptor's bytes
/// are kept there until the upload ends, so each copy, and all the copies one owner (an app,
/// or the host's programs) holds at once, are capped. Counted as the data the copy occupies on
/// disk (a sparse file's holes stay holes and cost nothing).
public struct UploadCopyLimits: Sendable, Equatable {
    public var perFileBytes: Int64
    public var perOwnerBytes: Int64

    public init(perFileBytes: Int64 = 4 << 30, perOwnerBytes: Int64 = 8 << 30) {
        self.perFileBytes = perFileBytes; self.perOwnerBytes = perOwnerBytes
    }

    /// Refuses, naming the limit, a copy of `data` bytes when `owner` already holds `held`.
    public func admit(data: Int64, held: Int64, owner: String) throws {
        guard data <= perFileBytes else {
            throw FerryError(
                .limitExceeded,
                "the file to upload holds \(SpaceReserve.mebibytes(data)) of data; "
                    + "a copy handed over by descriptor may hold at most \(SpaceReserve.mebibytes(perFileBytes)) "
                    + "(ferryd --upload-copy-max-mb)"
            )
        }
        guard held + data <= perOwnerBytes else {
            throw FerryError(
                .limitExceeded,
                "\(owner) already holds \(SpaceReserve.mebibytes(held)) in copies of files to upload; "
                    + "with this one it would exceed \(SpaceReserve.mebibytes(perOwnerBytes)) (ferryd "
                    + "--upload-copies-per-app-mb)"
            )
        }
    }
}
