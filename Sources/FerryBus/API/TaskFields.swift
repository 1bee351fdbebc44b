import FerryCore

extension TaskField {
    /// Every field of a task, each spelled once: a new field is a line here, its property in
    /// `TaskRecord`, its column in a migration and, when the API shows it, its key in the XML.
    /// ListTaskRows' fields come first, in the order of its struct.
    public static let all: [TaskField] = [
        .init(\.id, .id, row: true, json: .list),
        .init(\.session, .session, row: true, json: .list),
        .init(\.kind, .kind, row: true, json: .list),
        .init(\.url, .url, row: true, json: .list),
        .init(\.method, .method, row: true, json: .list),
        .init(\.uploadFile, .uploadFile, row: true),
        .init(\.state, .state, row: true, json: .list),
        .init(\.received, .received, row: true, json: .list),
        .init(\.expected, .expected, row: true, json: .list),
        .init(\.file, .file, row: true, json: .list),
        .init(\.error, .error, row: true, json: .list),
        .init(\.errorName, .errorName, row: true),
        .init(\.reason, .reason, row: true, json: .list),
        .init(\.description, .description, row: true, json: .list),
        .init(\.attempts, .attempts, row: true, json: .list),
        .init(\.retryAt, .retryAt, row: true),
        .init(\.created, .created, row: true, json: .list, jsonInSeconds: true),
        .init(\.updated, .updated, row: true, json: .list, jsonInSeconds: true),
        .init(shown: \.app, .app, json: .list),
        .init(\.priority, .priority, json: .detail),
        .init(\.maxRate, .maxRate, json: .detail),
        .init(\.replyStatus, .replyStatus, json: .detailWith(.replyStatus)),
        .init(\.replyFile, .replyFile, json: .detailWith(.replyStatus), sentWith: .replyStatus),
        .init(\.replyCut, .replyCut, json: .detailWith(.replyStatus), sentWith: .replyStatus),
        .init(\.replyHeaders, .replyHeaders, json: .detailWith(.replyStatus), sentWith: .replyStatus),
        // The agent's own.
        .init(\.host, nil, column: "host"),
        .init(\.etag, nil, column: "etag"),
        .init(\.lastModified, nil, column: "last_modified"),
        .init(\.directory, nil, column: "directory"),
        .init(\.output, nil, column: "output"),
        .init(\.suggestedName, nil, column: "suggested_name"),
        .init(\.sha256, nil, column: "sha256"),
        .init(\.headers, nil, column: "headers"),
        .init(\.maxAttempts, nil, column: "max_attempts"),
        .init(\.deadline, nil, column: "deadline"),
        .init(\.resumable, nil, column: "resumable"),
        .init(\.uploadURL, nil, column: "upload_url"),
        .init(\.keepsEncoding, nil, column: "keeps_encoding"),
    ]

    /// The fields the store keeps, the id first.
    public static let stored = all.filter { $0.column != nil }
    /// The fields the API's dictionary carries, in key order (as the agent writes them).
    public static let shown = all.filter { $0.key != nil }.sorted { $0.key!.rawValue < $1.key!.rawValue }
    public static let byKey = Dictionary(uniqueKeysWithValues: shown.map { ($0.key!, $0) })
    /// ListTaskRows' struct.
    public static let row = all.filter(\.inRow)
    /// The fields in every task of the CLI's JSON, in key order (as it prints them).
    public static let listed = shown.filter { $0.json == .list }
}
