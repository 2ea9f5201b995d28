import SyncSQLite
import SyncWire

/// The SQL of one store query, from the shared ``SQLTranslator``.
struct QueryPlan {
    var select: (sql: String, arguments: [SQLiteValue])
    var count: (sql: String, arguments: [SQLiteValue])?

    init(_ query: QueryDescription, columns: [String: ColumnType]) throws {
        let translator = SQLTranslator(table: query.table, columns: columns)
        select = Self.bindable(try Self.translating { () throws(QueryError) in try translator.select(query) })
        count = query.includeTotalCount ? Self.bindable(try Self.translating { () throws(QueryError) in try translator.count(query) }) : nil
    }

    static func delete(_ query: QueryDescription, columns: [String: ColumnType]) throws -> (sql: String, arguments: [SQLiteValue]) {
        let translator = SQLTranslator(table: query.table, columns: columns)
        return bindable(try translating { () throws(QueryError) in try translator.delete(query) })
    }

    private static func translating(_ body: () throws(QueryError) -> SQLStatement) throws -> SQLStatement {
        do {
            return try body()
        } catch {
            throw StoreError.invalidQuery(error.message)
        }
    }

    private static func bindable(_ statement: SQLStatement) -> (sql: String, arguments: [SQLiteValue]) {
        (statement.sql, statement.arguments.map(ValueCoding.sqliteValue))
    }
}
