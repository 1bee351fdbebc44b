import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One episode of an RSS feed: its title and enclosure.
struct Episode: Equatable {
    var title: String
    var url: URL
    var length: Int64?

    /// The name the file gets in the episodes folder: the enclosure's file name.
    var fileName: String { url.lastPathComponent.isEmpty ? "episode" : url.lastPathComponent }
}

/// RSS 2.0 items with enclosures, read with Foundation's XMLParser.
final class FeedParser: NSObject, XMLParserDelegate {
    private(set) var episodes: [Episode] = []
    private var inItem = false
    private var text = ""
    private var title = ""
    private var enclosure: (URL, Int64?)?
    private var parseError: Error?

    static func parse(_ data: Data) throws -> [Episode] {
        let p = XMLParser(data: data)
        let me = FeedParser()
        p.delegate = me
        guard p.parse() else {
            throw FeedError("the feed is not valid XML: \(p.parserError.map { "\($0)" } ?? "unknown error")")
        }
        return me.episodes
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        text = ""
        switch name {
        case "item": inItem = true; title = ""; enclosure = nil
        case "enclosure" where inItem:
            if let u = attributes["url"].flatMap(URL.init(string:)) {
                enclosure = (u, attributes["length"].flatMap { Int64($0) })
            }
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "title" where inItem: title = text.trimmingCharacters(in: .whitespacesAndNewlines)
        case "item":
            inItem = false
            if let (url, length) = enclosure {
                episodes.append(Episode(title: title.isEmpty ? url.lastPathComponent : title, url: url, length: length))
            }
        default: break
        }
    }
}

struct FeedError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
