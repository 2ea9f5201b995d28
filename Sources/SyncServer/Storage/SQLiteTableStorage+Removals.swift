import SyncSQL
import SyncWire

/// The stamp of each scope's newest hard delete, in `removalsTable`: a removed row leaves no
/// `updatedAt` behind, so the delete takes a stamp of its table's clock, like any write, and it
/// is kept here, written with the delete.
extension SQLiteTableStorage {
    /// The table of the records: key (the table's name, ASCII letters folded), owner (empty for
    /// a shared table), stamp.
    static let removalsTable = "__ciphersync_removals"

    /// Creates `removalsTable` unless it exists.
    func createRemovalsTable() throws {
        let sql: SQLFragment = """
            CREATE TABLE IF NOT EXISTS \(identifier: Self.removalsTable) (\(identifier: "key") TEXT NOT NULL, \
            \(identifier: "owner") TEXT NOT NULL, \(identifier: "stamp") TEXT NOT NULL, \
            PRIMARY KEY (\(identifier: "key"), \(identifier: "owner"))) WITHOUT ROWID
            """
        try connection.run(sql.statement(in: .sqlite).sql)
    }

    /// Records a new stamp of `schema`'s table as the newest hard delete of `scope`, in the
    /// delete's transaction (after its `DELETE` removed rows).
    func recordRemoval(_ schema: TableSchema, scope: RowScope) throws {
        let sql: SQLFragment = """
            INSERT INTO \(identifier: Self.removalsTable) (\(identifier: "key"), \(identifier: "owner"), \(identifier: "stamp")) \
            VALUES (\(bind: .text(ColumnKey(schema.name).folded)), \(bind: .text(scope.owner ?? "")), \(inline: stampCall(schema))) \
            ON CONFLICT (\(identifier: "key"), \(identifier: "owner")) DO UPDATE SET \(identifier: "stamp") = excluded.\(identifier: "stamp")
            """
        let statement = sql.statement(in: .sqlite)
        try connection.run(statement.sql, statement.arguments)
    }

    /// The newest hard delete recorded of any scope of `table` (to start its clock past it).
    func newestRemoval(of table: String) throws -> String? {
        let sql: SQLFragment = """
            SELECT max(\(identifier: "stamp")) AS latest FROM \(identifier: Self.removalsTable) \
            WHERE \(identifier: "key") = \(bind: .text(ColumnKey(table).folded))
            """
        let statement = sql.statement(in: .sqlite)
        return try connection.query(statement.sql, statement.arguments).first("latest")?.textValue
    }

    /// The scope's record in `removalsTable`, read by its key.
    public func removalStamp(of table: String, scope: RowScope) async throws -> String? {
        settleCommitGroup()
        let sql: SQLFragment = """
            SELECT \(identifier: "stamp") FROM \(identifier: Self.removalsTable) \
            WHERE \(identifier: "key") = \(bind: .text(ColumnKey(table).folded)) AND \(identifier: "owner") = \(bind: .text(scope.owner ?? ""))
            """
        let statement = sql.statement(in: .sqlite)
        return try connection.query(statement.sql, statement.arguments).first("stamp")?.textValue
    }
}
