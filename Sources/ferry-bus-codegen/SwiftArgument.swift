/// An argument as the generated Swift sees it: a field name, a Swift type and the codec that
/// writes and reads it (a static member of `BusCodec<Type>` in FerryBus).
///
/// The XML says what Swift cannot guess with two annotations on the argument:
/// `dev.ferry.Swift.Type` (e.g. `TaskOptions`, `Int64`) and `dev.ferry.Swift.Codec` (e.g.
/// `upload`). Without them a basic signature takes its plain type and codec (below); any other
/// signature without them is an error, so no argument is read with a guessed meaning.
struct SwiftArgument {
    let field: String
    let type: String
    let codec: String
    let signature: String

    static let typeKey = "dev.ferry.Swift.Type"
    static let codecKey = "dev.ferry.Swift.Codec"

    /// Plain types of basic signatures: (Swift type, codec).
    static let plain: [String: (String, String)] = [
        "s": ("String", "string"), "b": ("Bool", "bool"), "t": ("UInt64", "uint64"), "x": ("Int64", "int64"),
        "u": ("Int", "count"), "h": ("Int32", "handle"), "ay": ("[UInt8]", "bytes"), "as": ("[String]", "strings"),
    ]

    init(_ a: Interface.Argument, of member: String) throws {
        field = Self.fieldName(a.name)
        signature = a.signature
        switch (a.annotations[Self.typeKey], a.annotations[Self.codecKey], Self.plain[a.signature]) {
        case (let t?, let c?, _): (type, codec) = (t, c)
        case (nil, let c?, let p?): (type, codec) = (p.0, c)
        case (nil, nil, let p?): (type, codec) = p
        case (_?, nil, _):
            throw GeneratorError("\(member), argument \(a.name): \(Self.typeKey) needs \(Self.codecKey) too")
        case (nil, _, nil):
            throw GeneratorError(
                "\(member), argument \(a.name) (\(a.signature)): no plain Swift type; annotate \(Self.typeKey) and "
                    + "\(Self.codecKey)"
            )
        }
    }

    /// The codec, as generated code spells it.
    var codecExpression: String { "BusCodec<\(type)>.\(codec)" }

    /// after_id -> afterID, up_to_seq -> upToSeq, resume_data -> resumeData.
    static func fieldName(_ name: String) -> String {
        let parts = name.split(separator: "_").map(String.init)
        return parts.enumerated().map { i, p in
            if i == 0 { return p }
            return p == "id" ? "ID" : p.prefix(1).uppercased() + p.dropFirst()
        }.joined()
    }
}

extension Interface.Member {
    /// GetTask -> getTask: the case of `AgentMethod`, the handler's and the proxy's function.
    var caseName: String { name.prefix(1).lowercased() + name.dropFirst() }
}
