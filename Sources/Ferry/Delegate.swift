import Foundation

/// The session's callbacks (URLSessionDownloadDelegate and friends), called one at a time,
/// in event order, on the session's delegate queue. Each event is acknowledged to the agent
/// only after its callback returned: an app that dies inside a callback gets the event again.
/// Every method has an empty default.
public protocol FerrySessionDelegate: AnyObject, Sendable {
    /// Progress of a download (didWriteData). `totalBytesExpectedToWrite` is nil when unknown.
    func urlSession(
        _ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?)
    /// The download continued from `fileOffset` instead of starting over.
    func urlSession(
        _ session: FerrySession, downloadTask: FerryDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64?)
    /// The file is complete at `location` and is the app's to move now. A file still there when
    /// this returns goes to the configuration's default destination; it is never deleted.
    func urlSession(_ session: FerrySession, downloadTask: FerryDownloadTask, didFinishDownloadingTo location: URL)
    /// Progress of an upload.
    func urlSession(
        _ session: FerrySession, task: FerryTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    /// The task ended; `error` is nil on success and carries resume data when resumable.
    func urlSession(_ session: FerrySession, task: FerryTask, didCompleteWithError error: FerryTaskError?)
    /// The server wants credentials. Call `completionHandler` once (from any thread); the task
    /// waits until then. The default answer fails the task as the server answered.
    func urlSession(
        _ session: FerrySession, task: FerryTask, didReceive challenge: FerryAuthenticationChallenge,
        completionHandler: @escaping @Sendable (FerryChallengeDisposition) -> Void)
    /// After finishTasksAndInvalidate / invalidateAndCancel: the session is over.
    func urlSession(_ session: FerrySession, didBecomeInvalidWithError error: Error?)
    /// Every event queued for the session has been delivered (call the completion handler of a
    /// background launch from here once the app is done).
    func urlSessionDidFinishEvents(forBackgroundURLSession session: FerrySession)
}

extension FerrySessionDelegate {
    public func urlSession(
        _ session: FerrySession, downloadTask: FerryDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?
    ) {}
    public func urlSession(
        _ session: FerrySession, downloadTask: FerryDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64?
    ) {}
    public func urlSession(
        _ session: FerrySession, downloadTask: FerryDownloadTask, didFinishDownloadingTo location: URL
    ) {}
    public func urlSession(
        _ session: FerrySession, task: FerryTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64?
    ) {}
    public func urlSession(_ session: FerrySession, task: FerryTask, didCompleteWithError error: FerryTaskError?) {}
    public func urlSession(
        _ session: FerrySession, task: FerryTask, didReceive challenge: FerryAuthenticationChallenge,
        completionHandler: @escaping @Sendable (FerryChallengeDisposition) -> Void
    ) {
        completionHandler(.performDefaultHandling)
    }
    public func urlSession(_ session: FerrySession, didBecomeInvalidWithError error: Error?) {}
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: FerrySession) {}
}
