import SyncSQLite
import SyncWire

/// The SQL of one store query, built by the shared ``SQLTranslator``.
struct QueryPlan {
    var select: (sql: String, arguments: [SQLiteValue])
    var count: (sql: String, arguments: [SQLiteValue])?

    init(_ query: QueryDescription, columns: [String: ColumnType]) throws {
        fatalError("wired to SQLTranslator once SyncWire lands it")
    }

    static func delete(_ query: QueryDescription, columns: [String: ColumnType]) throws -> (sql: String, arguments: [SQLiteValue]) {
        fatalError("wired to SQLTranslator once SyncWire lands it")
    }
}
