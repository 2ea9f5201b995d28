import PostgresNIO
import SyncSQL
import SyncWire

/// The stamp of each scope's newest hard delete, in ``removalsTable``: a removed row leaves no
/// `updatedAt` behind, so the delete's stamp is kept here, written in the delete's transaction.
extension PostgresTableStorage {
    /// Records `stamp` as the newest hard delete of `scope` in the table whose metadata key is
    /// `key`, on the delete's connection (inside its transaction).
    func recordRemoval(key: String, scope: RowScope?, stamp: String, on connection: PostgresConnection) async throws {
        let owner = scope?.owner ?? ""
        let sql: SQLFragment = """
            INSERT INTO \(identifier: Self.removalsTable) (\(identifier: "key"), \(identifier: "owner"), \(identifier: "stamp")) \
            VALUES (\(bind: .text(key)), \(bind: .text(owner)), \(bind: .text(stamp))) \
            ON CONFLICT (\(identifier: "key"), \(identifier: "owner")) DO UPDATE SET \(identifier: "stamp") = EXCLUDED.\(identifier: "stamp")
            """
        try await connection.query(counted(sql.statement(in: .postgres)), logger: logger)
    }

    /// The scope's record in ``removalsTable``, read by its key.
    public func removalStamp(of table: String, scope: RowScope) async throws -> String? {
        let sql: SQLFragment = """
            SELECT \(identifier: "stamp") FROM \(identifier: Self.removalsTable) \
            WHERE \(identifier: "key") = \(bind: .text(Self.metadataKey(table))) AND \(identifier: "owner") = \(bind: .text(scope.owner ?? ""))
            """
        let query = counted(sql.statement(in: .postgres))
        let logger = self.logger
        let rows = try await leased { connection in try await connection.query(query, logger: logger).collect() }
        return rows.first.flatMap { Self.values($0).first?.1.textValue }
    }
}
