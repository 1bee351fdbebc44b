import Foundation

/// What a task asks the server for (the background subset of URLRequest).
public struct FerryRequest: Sendable, Equatable {
    public var url: URL
    /// GET or POST for downloads; PUT or POST for uploads. nil = GET / PUT.
    public var httpMethod: String?
    public var allHTTPHeaderFields: [String: String]

    public init(url: URL, httpMethod: String? = nil, allHTTPHeaderFields: [String: String] = [:]) {
        self.url = url; self.httpMethod = httpMethod; self.allHTTPHeaderFields = allHTTPHeaderFields
    }
}
