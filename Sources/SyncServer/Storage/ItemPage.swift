public import SyncWire

/// A page of a list, written: the JSON text of an array of items, and how many items it holds.
public struct ItemPage: Sendable {
    /// The JSON text (UTF-8) of the array.
    public var bytes: [UInt8]
    /// The number of items in the array.
    public var count: Int

    /// A page.
    ///
    /// - Parameters:
    ///   - bytes: The JSON text of the array.
    ///   - count: The number of items in it.
    public init(bytes: [UInt8], count: Int) {
        self.bytes = bytes
        self.count = count
    }

    /// The page of `items`, written by `JSONWriter`.
    ///
    /// - Parameter items: The items, in order.
    /// - Throws: `JSONError` for a value JSON cannot hold.
    public init(items: [JSONObject]) throws {
        self.init(bytes: Array(try JSONWriter.data(items)), count: items.count)
    }

    /// The `{"count": n, "results": […]}` envelope of the page (`$inlinecount=allpages`), as
    /// `JSONWriter` writes it: members sorted by name.
    ///
    /// - Parameter totalCount: The number of matching rows, ignoring top and skip.
    /// - Returns: The JSON text of the envelope.
    public func envelope(totalCount: Int) -> [UInt8] {
        var text = Array(#"{"count":\#(totalCount),"results":"#.utf8)
        text += bytes
        text.append(UInt8(ascii: "}"))
        return text
    }
}

extension TableStorage {
    /// The rows ``select(_:scope:extraFilter:)`` returns, written by `JSONWriter`.
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - scope: The rows the request may see.
    ///   - extraFilter: A filter ANDed with the query's.
    /// - Returns: The page.
    /// - Throws: What ``select(_:scope:extraFilter:)`` throws; `JSONError` for a value JSON
    ///   cannot hold.
    public func selectPage(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> ItemPage {
        try ItemPage(items: try await select(query, scope: scope, extraFilter: extraFilter))
    }
}
