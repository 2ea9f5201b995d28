import SyncSQL
import SyncWire

/// The SQL of one store query, from the shared ``SQLTranslator`` in SQLite's dialect; its
/// arguments bind as they are.
struct QueryPlan {
    var select: SQLStatement
    var count: SQLStatement?

    init(_ query: QueryDescription, columns: [String: ColumnType]) throws {
        let translator = SQLTranslator(table: query.table, columns: columns, dialect: .sqlite)
        select = try Self.translating { () throws(QueryError) in try translator.select(query) }
        count = query.includeTotalCount ? try Self.translating { () throws(QueryError) in try translator.count(query) } : nil
    }

    static func delete(_ query: QueryDescription, columns: [String: ColumnType]) throws -> SQLStatement {
        let translator = SQLTranslator(table: query.table, columns: columns, dialect: .sqlite)
        return try translating { () throws(QueryError) in try translator.delete(query) }
    }

    private static func translating(_ body: () throws(QueryError) -> SQLStatement) throws -> SQLStatement {
        do {
            return try body()
        } catch {
            throw StoreError.invalidQuery(error.message)
        }
    }
}
