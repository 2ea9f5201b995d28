import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

/// The tables and columns of one store, cached; reloaded after a rolled-back transaction.
final class SchemaCache {
    /// Each user table's columns under their stored spelling, by table name as SQLite matches
    /// it (`todoitem` finds `TodoItem`). Find a column by a property name through
    /// ``ColumnIndex``: SQLite ignores ASCII case in column names too.
    var tables: [ColumnKey: [String: ColumnType]]

    init(tables: [ColumnKey: [String: ColumnType]]) {
        self.tables = tables
    }

    func reload(_ connection: Connection) throws {
        tables = try Self.load(connection)
    }

    /// Reads every user table and its columns from the database.
    static func load(_ connection: Connection) throws -> [ColumnKey: [String: ColumnType]] {
        var tables: [ColumnKey: [String: ColumnType]] = [:]
        for row in try connection.rows(StoreSQL.userTables) {
            guard let name = row.first?.textValue else { continue }
            tables[ColumnKey(name)] = try columns(of: name, connection)
        }
        return tables
    }

    static func columns(of table: String, _ connection: Connection) throws -> [String: ColumnType] {
        var columns: [String: ColumnType] = [:]
        // PRAGMA table_info rows: cid, name, type, notnull, dflt_value, pk
        for row in try connection.rows(StoreSQL.tableInfo(table)) {
            guard row.count > 2, let name = row[1].textValue else { continue }
            columns[name] = ColumnType(declared: row[2].textValue ?? "") ?? .text
        }
        return columns
    }
}

/// One transaction's view of a ``SQLiteStore``: the ``StoreWriter`` its closures receive, with the
/// engine's records kept by its own statements (``SyncRecordsWriter``, the fast path).
///
/// Not Sendable; it lives only for the duration of one `read` or `write` closure.
final class StoreSession: SyncRecordsWriter {
    let connection: Connection
    let schema: SchemaCache
    private var statements: [String: Statement] = [:]

    init(connection: Connection, schema: SchemaCache) {
        self.connection = connection
        self.schema = schema
    }

    /// A prepared statement for `sql`, reused within the transaction.
    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        let prepared = try connection.prepare(sql)
        statements[sql] = prepared
        return prepared
    }

    func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [[SQLValue]] {
        try statement(sql).rows(arguments)
    }

    func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try statement(sql).run(arguments)
    }

    static func checkTableName(_ table: String) throws {
        guard TableName.isServed(table) else { throw StoreError.invalidTableName(table) }
    }
}
