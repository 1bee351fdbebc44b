import Foundation

/// What a task asks the server for (the background subset of URLRequest).
public struct FerryRequest: Sendable, Equatable {
    /// An http or https URL.
    public var url: URL
    /// GET or POST for downloads; PUT or POST for uploads. nil = GET / PUT.
    public var httpMethod: String?
    /// Header fields sent with the request. `Authorization` and `Cookie` are never sent to another
    /// host a redirect leads to; an upload resource on another origin gets none of these fields.
    public var allHTTPHeaderFields: [String: String]
    /// Not before this moment (URLSessionTask.earliestBeginDate). On the request, not the task:
    /// the agent holds the task from the moment it is made. After `resume()` the task waits
    /// (reason `scheduled`) until then, across restarts of the app and the agent.
    public var earliestBeginDate: Date?
    /// 0 to 1 (URLSessionTask.priority; nil: 0.5): among queued tasks the higher starts first.
    public var priority: Double?

    /// A request for `url`, with the defaults of a plain GET (or PUT for an upload).
    public init(
        url: URL, httpMethod: String? = nil, allHTTPHeaderFields: [String: String] = [:],
        earliestBeginDate: Date? = nil,
        priority: Double? = nil
    ) {
        self.url = url; self.httpMethod = httpMethod; self.allHTTPHeaderFields = allHTTPHeaderFields
        self.earliestBeginDate = earliestBeginDate; self.priority = priority
    }
}
