import SQLiteNIO
import SyncSQL
public import SyncWire

extension SQLiteTableStorage {
    /// The rows a query matches, written as a page straight from the result rows: each value read
    /// through its column's declared type as a single item's are, the members in the order
    /// `JSONWriter` writes an item's, with no dictionary per row (the owner column left out).
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - scope: The rows the request may see.
    ///   - extraFilter: A filter ANDed with the query's.
    /// - Returns: The page; empty when the table does not exist.
    /// - Throws: `QueryError` when the query names an unknown column; `JSONError` for a value
    ///   JSON cannot hold; sqlite-nio's errors.
    public func selectPage(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> ItemPage {
        guard let schema = try scoped(query.table, scope) else { return ItemPage(bytes: Array("[]".utf8), count: 0) }
        let statement = try translator(schema, scope).select(query, extraFilter: extraFilter)
        let rows = try await connection.query(statement.sql, statement.arguments.map(Self.data))
        guard let first = rows.first?.columns else { return ItemPage(bytes: Array("[]".utf8), count: 0) }
        // Every row of one statement has the same columns in the same order.
        let kept = first.indices.filter { first[$0].name != TableSchema.ownerColumn }
        let types = kept.map { schema.columns[first[$0].name] }
        var writer = JSONRowWriter(names: kept.map { first[$0].name })
        for row in rows {
            let columns = row.columns
            try writer.append { position in JSONValue(sql: Self.value(columns[kept[position]].data), type: types[position]) }
        }
        let count = writer.count
        return ItemPage(bytes: writer.finish(), count: count)
    }
}
