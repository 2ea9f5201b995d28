import PostgresNIO
import SyncSQL
import SyncWire

/// The stamp of each scope's newest hard delete, in `removalsTable`: a removed row leaves no
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
        _ = try await run(counted(sql.statement(in: .postgres)), on: connection)
    }

    /// The scope's record in `removalsTable`, read by its key.
    public func removalStamp(of table: String, scope: RowScope) async throws -> String? {
        let sql: SQLFragment = """
            SELECT \(identifier: "stamp") FROM \(identifier: Self.removalsTable) \
            WHERE \(identifier: "key") = \(bind: .text(Self.metadataKey(table))) AND \(identifier: "owner") = \(bind: .text(scope.owner ?? ""))
            """
        let query = counted(sql.statement(in: .postgres))
        let rows = try await leased { connection in try await run(query, on: connection) }
        return rows.first.flatMap { Self.values($0).first?.1.textValue }
    }
}

extension PostgresTableStorage {
    /// The most scopes one statement of ``newestStamps(of:scopes:)`` reads.
    static let scopesPerRead = 500

    /// Up to `scopesPerRead` scopes per statement: for each owner (of a JSON array bound as
    /// one value), the newest `updatedAt` of its rows through the `updatedAt` index and its
    /// recorded hard delete, the greater of the two.
    public func newestStamps(of table: String, scopes: [RowScope]) async throws -> [RowScope: String] {
        guard let first = scopes.first, let schema = try await scoped(table, first) else { return [:] }
        for scope in scopes.dropFirst() { try schema.check(scope) }
        let key = Self.metadataKey(schema.name)
        let owner: SQLFragment = "\(identifier: "o").\(identifier: "owner")"
        let rowsOfOwner: SQLFragment =
            schema.isPerUser ? " WHERE \(identifier: TableSchema.ownerColumn) = \(inline: owner)" : ""
        var stamps: [RowScope: String] = [:]
        var start = 0
        while start < scopes.count {
            let chunk = scopes[start..<min(start + Self.scopesPerRead, scopes.count)]
            start += Self.scopesPerRead
            let owners = try JSONWriter.string(.array(chunk.map { .string($0.owner ?? "") }))
            let sql: SQLFragment = """
                SELECT \(inline: owner) AS \(identifier: "owner"), GREATEST(\
                (SELECT max(\(identifier: SystemProperty.updatedAt)) FROM \(identifier: schema.name)\(inline: rowsOfOwner)), \
                (SELECT \(identifier: "stamp") FROM \(identifier: Self.removalsTable) \
                WHERE \(identifier: "key") = \(bind: .text(key)) AND \(identifier: "owner") = \(inline: owner))) AS \(identifier: "stamp") \
                FROM json_array_elements_text(\(bind: .text(owners))::json) AS \(identifier: "o")(\(identifier: "owner"))
                """
            let query = counted(sql.statement(in: .postgres))
            let rows = try await leased { connection in try await run(query, on: connection) }
            for row in rows {
                let values = Dictionary(Self.values(row), uniquingKeysWith: { first, _ in first })
                guard let owner = values["owner"]?.textValue, let stamp = values["stamp"]?.textValue else { continue }
                stamps[schema.isPerUser ? .owner(owner) : .shared] = stamp
            }
        }
        return stamps
    }
}
