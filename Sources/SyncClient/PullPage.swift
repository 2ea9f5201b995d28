import Foundation
import SyncStore
import SyncWire

/// One page of a pull, read by the strict parser (``JSONParser``): a JSON array of items, or the
/// `{"results": […], "count": n}` envelope.
struct PullPage: Sendable {
    var items: [JSONObject]
    /// The total count of the envelope (`$inlinecount=allpages`), if any.
    var count: Int?

    /// Decodes a page.
    /// - Throws: ``SyncError/malformedServerResponse`` when the body is not an array of objects
    ///   (or the envelope: an object whose `results` is one, and whose `count`, if any, is an
    ///   integer or `null`; other members are ignored).
    static func decode(_ body: Data, statusCode: Int) throws -> PullPage {
        if let items = try? JSONParser.parseObjects(body) { return PullPage(items: items) }
        if case .object(let envelope)? = try? JSONParser.parse(body), case .array(let results)? = envelope["results"] {
            var items: [JSONObject] = []
            items.reserveCapacity(results.count)
            for case .object(let item) in results { items.append(item) }
            switch envelope["count"] {
            case nil, .null?:
                if items.count == results.count { return PullPage(items: items) }
            case .int(let count)?:
                if items.count == results.count, let count = Int(exactly: count) { return PullPage(items: items, count: count) }
            default:
                break
            }
        }
        throw SyncError(
            .malformedServerResponse, reason: "The server's page is not a JSON array of objects.", statusCode: statusCode)
    }

    /// The `updatedAt` of each item in milliseconds, in the items' order; `nil` for an item
    /// without a readable one. Read once per page, for the token and the count.
    var updatedAtMilliseconds: [Int64?] {
        items.map { $0[SystemProperty.updatedAt]?.stringValue.flatMap(DeltaToken.milliseconds(from:)) }
    }
}

/// Delta tokens of incremental pulls: the latest `updatedAt` seen, per table and query id,
/// stored in the config table with millisecond precision.
enum DeltaToken {
    /// The config key of a token.
    static func key(table: String, queryId: String) -> String { "deltaToken|\(table)|\(queryId)" }

    /// The config key prefix of every token of a table.
    static func prefix(table: String) -> String { "deltaToken|\(table)|" }

    /// Milliseconds since 1970 of an ISO 8601 timestamp, truncated (never rounded up: rounding
    /// up would skip rows sharing the boundary timestamp).
    static func milliseconds(from text: String) -> Int64? {
        WireDate.milliseconds(from: text)
    }

    /// The wire text of a token (`1999-12-03T15:44:29.000Z`).
    static func text(milliseconds: Int64) -> String {
        WireDate.string(milliseconds: milliseconds)
    }

    /// The date of a token, nudged a tenth of a millisecond up so that formatting (which
    /// truncates) gives back the same millisecond despite floating-point error.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: (Double(milliseconds) + 0.1) / 1000)
    }
}
