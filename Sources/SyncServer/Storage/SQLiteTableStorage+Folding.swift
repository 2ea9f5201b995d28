import SyncSQL
import SyncWire

/// Files made before ids were folded: their `id` column compares bytes. Opening such a file
/// rebuilds each of its tables with the folding id column (`COLLATE NOCASE`), in one transaction
/// per table, keeping every row, column and type; a table with two ids that differ only by ASCII
/// case cannot be folded and the storage does not open (nothing is changed).
extension SQLiteTableStorage {
    /// Rebuilds `table` with a folding id column unless it has one.
    func foldIDsIfNeeded(_ table: String) async throws {
        guard try !idFoldsCase(table) else { return }
        let clashing: SQLFragment = """
            SELECT count(*) AS groups FROM (SELECT 1 FROM \(identifier: table) \
            GROUP BY \(identifier: SystemProperty.id) COLLATE NOCASE HAVING count(*) > 1)
            """
        let groups = try connection.query(clashing.statement(in: .sqlite).sql).first("groups")?.integerValue.map(Int.init) ?? 0
        guard groups == 0 else { throw TableStorageError.idsDifferingOnlyByCase(table: table, count: groups) }

        let schema = try readSchema(table)
        let system = Set(
            [SystemProperty.id, SystemProperty.createdAt, SystemProperty.updatedAt, SystemProperty.version, SystemProperty.deleted].map(
                ColumnKey.init))
        var declared: [(String, String)] = []
        for info in try connection.query("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)]).rows {
            guard let name = info[0].textValue, !system.contains(ColumnKey(name)), name != TableSchema.ownerColumn else { continue }
            declared.append((name, info[1].textValue ?? ""))
        }
        let staging = "__folding_" + table
        let columns: [SQLFragment] = ((schema.isPerUser ? [TableSchema.ownerColumn] : []) + schema.columns.keys.sorted()).map { "\(identifier: $0)" }
        let list = SQLFragment.joined(columns, separator: ", ")
        var statements = Self.createTable(staging, isPerUser: schema.isPerUser, columns: declared).prefix(1).map(\.sql)
        statements.append(
            ("INSERT INTO \(identifier: staging) (\(inline: list)) SELECT \(inline: list) FROM \(identifier: table)" as SQLFragment).statement(
                in: .sqlite
            ).sql)
        statements.append(("DROP TABLE \(identifier: table)" as SQLFragment).statement(in: .sqlite).sql)
        statements.append(("ALTER TABLE \(identifier: staging) RENAME TO \(identifier: table)" as SQLFragment).statement(in: .sqlite).sql)
        statements += Self.createTable(table, isPerUser: schema.isPerUser, columns: declared).dropFirst().map(\.sql)

        try await transaction {
            for sql in statements { try connection.run(sql) }
        }
    }

    /// Whether the `id` column of `table`'s key compares without regard to ASCII case.
    private func idFoldsCase(_ table: String) throws -> Bool {
        let rows = try connection.query(
            """
            SELECT x.coll AS coll FROM pragma_index_list(?) AS l, pragma_index_xinfo(l.name) AS x \
            WHERE l.origin = 'pk' AND x.name = ?
            """, [.text(table), .text(SystemProperty.id)])
        return rows.rows.contains { $0.first?.textValue?.uppercased() == "NOCASE" }
    }
}
