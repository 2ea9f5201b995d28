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
    ///   JSON cannot hold; ``ServerSQLiteError``.
    public func selectPage(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> ItemPage {
        guard let schema = try scoped(query.table, scope) else { return ItemPage(bytes: Array("[]".utf8), count: 0) }
        settleCommitGroup()
        let statement = try translator(schema, scope).select(query, extraFilter: extraFilter)
        var writer: JSONRowWriter?
        var kept: [Int] = [], types: [ColumnType?] = []
        try connection.run(statement.sql, statement.arguments) { row in
            if writer == nil {
                // Every row of one statement has the same columns in the same order.
                let names = row.columnNames
                kept = names.indices.filter { names[$0] != TableSchema.ownerColumn }
                types = kept.map { schema.columns[names[$0]] }
                writer = JSONRowWriter(names: kept.map { names[$0] })
            }
            try writer?.append { position in JSONValue(sql: row.value(at: kept[position]), type: types[position]) }
        }
        guard var writer else { return ItemPage(bytes: Array("[]".utf8), count: 0) }
        let count = writer.count
        return ItemPage(bytes: writer.finish(), count: count)
    }
}
