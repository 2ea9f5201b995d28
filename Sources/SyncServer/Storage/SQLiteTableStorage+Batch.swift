import SyncSQL
import SyncWire

/// A batch of one table's writes decided in memory and written at its end by statements kept
/// prepared (see ``SQLiteTableStorage/inTransaction(table:scope:ids:_:)``).
///
/// The batch reads the rows its ids name once; each write of the batch then checks its condition
/// against the rows as the batch's earlier writes left them, takes its stamp and version as a
/// statement would, and changes the row in memory; the rows the batch changed are written before
/// it commits. The values kept are those SQLite would store (the column's affinity applied), so a
/// write answers the row a statement's `RETURNING *` would have answered.
struct BatchRows {
    /// The table the batch writes, and the scope of its rows.
    let table: ColumnKey
    let scope: RowScope
    /// The rows known to the batch by id: a row's stored values by column name (the owner column
    /// left out), or `nil` for an id that has no row.
    var rows: [ColumnKey: [String: SQLValue]?] = [:]
    /// The ids that had a row in the database when the batch read them, each spelled as stored.
    var stored: [ColumnKey: String] = [:]
    /// The ids the batch wrote, in the order of their first write.
    var changed: [ColumnKey] = []
    private var changedSet: Set<ColumnKey> = []

    init(table: ColumnKey, scope: RowScope) {
        self.table = table
        self.scope = scope
    }

    /// Records the row of an id as the batch leaves it (`nil`: deleted).
    mutating func set(_ id: ColumnKey, _ row: [String: SQLValue]?) {
        rows[id] = .some(row)
        if changedSet.insert(id).inserted { changed.append(id) }
    }
}

extension SQLiteTableStorage {
    /// Runs a batch of writes of one table as one transaction (see ``TableStorage``), the rows of
    /// `ids` read by one statement at its start and the rows it changed written at its
    /// end; each write in between is decided against the batch's rows, in order.
    ///
    /// - Parameters:
    ///   - table: The table the batch writes.
    ///   - scope: The scope of its writes.
    ///   - ids: The ids its writes name.
    ///   - body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the engine's error.
    public func inTransaction<T: Sendable>(
        table: String, scope: RowScope, ids: [String], _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await inTransaction {
            try await readBatchRows(table: table, scope: scope, ids: ids)
            do {
                let result = try await body()
                try await writeBatchRows()
                await endBatch()
                return result
            } catch {
                await endBatch()
                throw error
            }
        }
    }

    private func endBatch() { batchRows = nil }

    /// The batch's rows when the current task runs in a batch of `table` in `scope`.
    func batchRows(_ table: String, _ scope: RowScope) -> BatchRows? {
        guard Self.transactionOwner == ObjectIdentifier(self), let batch = batchRows, batch.table == ColumnKey(table), batch.scope == scope
        else { return nil }
        return batch
    }

    /// The row of `id` as the batch sees it: from the batch's rows, or read (and kept) when the
    /// batch did not know the id.
    func batchRow(_ id: String, _ schema: TableSchema, _ scope: RowScope) throws -> [String: SQLValue]? {
        let key = ColumnKey(id)
        if let known = batchRows?.rows[key] { return known }
        let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: Self.key(id, scope))"
        let statement = sql.statement(in: .sqlite)
        let row = try storedRows(statement).first
        batchRows?.rows[key] = .some(row)
        if case .text(let stored)? = row?[SystemProperty.id] { batchRows?.stored[key] = stored }
        return row
    }

    /// The item of a batch row: every column of the table (one the batch added reads `null`).
    static func item(_ row: [String: SQLValue], _ schema: TableSchema) -> JSONObject {
        var item = JSONObject(minimumCapacity: schema.columns.count)
        for (name, type) in schema.columns { item[name] = JSONValue(sql: row[name] ?? .null, type: type) }
        return item
    }

    /// The value SQLite stores for `value` in a column of `type`: a whole real number in an
    /// `INTEGER`, `BOOLEAN` or `JSON` column (integer or numeric affinity) is stored as an integer.
    static func stored(_ value: SQLValue, as type: ColumnType?) -> SQLValue {
        guard case .real(let real) = value, let type, type != .real, type != .text else { return value }
        guard real.rounded(.towardZero) == real, real > -9.223_372_036_854_775_808e18, real < 9.223_372_036_854_775_808e18,
            let integer = Int64(exactly: real), integer != .min, integer != .max
        else { return value }
        return .integer(integer)
    }

    // MARK: helpers

    /// Reads the rows of `ids` in one statement (none when the table does not exist yet).
    private func readBatchRows(table: String, scope: RowScope, ids: [String]) throws {
        var batch = BatchRows(table: ColumnKey(table), scope: scope)
        let keys = Set(ids.map(ColumnKey.init))
        for key in keys { batch.rows[key] = .some(nil) }
        if let schema = try scoped(table, scope), !keys.isEmpty {
            let list = SQLFragment.joined(ids.map { .bind(.text($0)) }, separator: ", ")
            var conditions: [SQLFragment] = ["\(identifier: SystemProperty.id) IN (\(inline: list))"]
            if let owner = scope.ownerCondition { conditions.insert(owner, at: 0) }
            let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: .joined(conditions, separator: " AND "))"
            let statement = sql.statement(in: .sqlite)
            for row in try storedRows(statement) {
                guard case .text(let id)? = row[SystemProperty.id] else { continue }
                batch.rows[ColumnKey(id)] = .some(row)
                batch.stored[ColumnKey(id)] = id
            }
        }
        batchRows = batch
    }

    /// Writes the rows the batch changed: one `DELETE` for those it removed, then each other row
    /// by a statement kept prepared: an `UPDATE` of every column but the id for a row the database
    /// has (the id too when the batch deleted it and inserted it again spelled otherwise), an
    /// `INSERT` for a new one.
    private func writeBatchRows() throws {
        guard let batch = batchRows, !batch.changed.isEmpty, let schema = schemas[batch.table] else { return }
        let owner = batch.scope.owner
        var removed: [SQLFragment] = []
        var updated: [[String: SQLValue]] = [], respelled: [[String: SQLValue]] = [], inserted: [[String: SQLValue]] = []
        for id in batch.changed {
            if case .some(.some(let row)) = batch.rows[id] {
                if let spelling = batch.stored[id] {
                    if row[SystemProperty.id] == .text(spelling) { updated.append(row) } else { respelled.append(row) }
                } else {
                    inserted.append(row)
                }
            } else if batch.stored[id] != nil {
                removed.append(.bind(.text(id.folded)))
            }
        }
        if !removed.isEmpty {
            var conditions: [SQLFragment] = ["\(identifier: SystemProperty.id) IN (\(inline: .joined(removed, separator: ", ")))"]
            if let condition = batch.scope.ownerCondition { conditions.insert(condition, at: 0) }
            let sql: SQLFragment = "DELETE FROM \(identifier: schema.name) WHERE \(inline: .joined(conditions, separator: " AND "))"
            let statement = sql.statement(in: .sqlite)
            try connection.run(statement.sql, statement.arguments)
            try recordRemoval(schema, scope: batch.scope)
        }
        let table = SQLIdentifier.quote(schema.name)
        let ownerColumn = SQLIdentifier.quote(TableSchema.ownerColumn)
        let columns = schema.columns.keys.sorted()
        // The id is set only where its spelling changes (a row the batch deleted and inserted again
        // takes the insert's; the key matches either, folding case): setting it rewrites the
        // row's key in the table's id index.
        for (rows, set) in [(updated, columns.filter { $0 != SystemProperty.id }), (respelled, columns)] where !rows.isEmpty {
            let key = (owner == nil ? "" : "\(ownerColumn) = ? AND ") + "\(SQLIdentifier.quote(SystemProperty.id)) = ?"
            let sql = "UPDATE \(table) SET \(set.map { "\(SQLIdentifier.quote($0)) = ?" }.joined(separator: ", ")) WHERE \(key)"
            for row in rows {
                var arguments = set.map { row[$0] ?? .null }
                if let owner { arguments.append(.text(owner)) }
                arguments.append(row[SystemProperty.id] ?? .null)
                try connection.run(sql, arguments)
            }
        }
        if !inserted.isEmpty {
            let names = (owner == nil ? [] : [ownerColumn]) + columns.map(SQLIdentifier.quote)
            let sql =
                "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
            for row in inserted {
                var arguments: [SQLValue] = owner.map { [.text($0)] } ?? []
                arguments += columns.map { row[$0] ?? .null }
                try connection.run(sql, arguments)
            }
        }
    }

    /// The rows a statement returns, each as its values by column name, the owner column left out.
    private func storedRows(_ statement: SQLStatement) throws -> [[String: SQLValue]] {
        var rows: [[String: SQLValue]] = []
        var names: [String] = []
        try connection.run(statement.sql, statement.arguments) { row in
            if names.isEmpty { names = row.columnNames }
            var values = [String: SQLValue](minimumCapacity: names.count)
            for (index, name) in names.enumerated() where name != TableSchema.ownerColumn { values[name] = row.value(at: index) }
            rows.append(values)
        }
        return rows
    }
}
