import SyncSQL
public import SyncWire

/// Writes: each one statement that stamps itself and returns the stored row (see
/// ``SQLiteTableStorage``).
extension SQLiteTableStorage {
    public func insert(table: String, scope: RowScope, item: JSONObject) async throws -> WriteResult {
        guard let schema = try scoped(table, scope), case .string(let id)? = item[SystemProperty.id] else { return .missing }
        var values = schema.storable(item)
        values[SystemProperty.id] = .string(id)
        values[SystemProperty.version] = .string(RowVersion.make())
        values[SystemProperty.deleted] = .bool(false)
        if batchRows(table, scope) != nil { return try await batchInsert(values, schema, table: table, id: id, scope: scope) }
        let sorted = values.sorted { $0.key < $1.key }
        // In text order: the stamp's table, the owner, the values.
        var arguments: [SQLValue] = [.text(schema.name)]
        if let owner = scope.owner { arguments.append(.text(owner)) }
        for (_, value) in sorted { arguments.append(try SQLValue(json: value)) }
        let shape = WriteShape(kind: .insert, table: schema.name, isOwned: scope.owner != nil, columns: sorted.map(\.key))
        let statement = try cachedStatement(shape, arguments) {
            var names: [SQLFragment] = [], selected: [SQLFragment] = []
            if let owner = scope.owner {
                names.append("\(identifier: TableSchema.ownerColumn)")
                selected.append(.bind(.text(owner)))
            }
            for (name, value) in sorted {
                names.append("\(identifier: name)")
                selected.append(.bind(try SQLValue(json: value)))
            }
            // createdAt and updatedAt are one stamp: the CTE is evaluated once.
            let stamp: SQLFragment = "\(identifier: "stamp")"
            for name in [SystemProperty.createdAt, SystemProperty.updatedAt] {
                names.append("\(identifier: name)")
                selected.append(stamp)
            }
            return """
                WITH \(identifier: "stamped")(\(inline: stamp)) AS MATERIALIZED (SELECT \(inline: stampCall(schema))) \
                INSERT INTO \(identifier: schema.name) (\(inline: .joined(names, separator: ", "))) \
                SELECT \(inline: .joined(selected, separator: ", ")) FROM \(identifier: "stamped") WHERE true \
                ON CONFLICT DO NOTHING RETURNING *
                """
        }
        return try await write(statement, schema, table: table, id: id, change: .written(table: table, scope: scope)) { [self] in
            // The id is taken: the row that has it (if it went away meanwhile, the insert is tried again).
            if let existing = try current(schema, id: id, scope: scope) { return .conflict(existing) }
            return try await insert(table: table, scope: scope, item: item)
        }
    }

    public func update(table: String, id: String, scope: RowScope, values: JSONObject, condition: WriteCondition) async throws -> WriteResult {
        guard let schema = try scoped(table, scope) else { return .missing }
        var changes = schema.storable(values)
        changes.removeValue(forKey: SystemProperty.id)
        changes[SystemProperty.version] = .string(RowVersion.make())
        if batchRows(table, scope) != nil {
            return try await batchWrite(schema, table: table, id: id, scope: scope, condition: condition) { row in
                for (name, value) in changes {
                    let column = try Self.column(name, schema)
                    row[column] = Self.stored(try SQLValue(json: value), as: schema.columns[column])
                }
            }
        }
        let sorted = changes.sorted { $0.key < $1.key }
        // In text order: the values, the stamp's table, then the condition's.
        var arguments: [SQLValue] = []
        for (_, value) in sorted { arguments.append(try SQLValue(json: value)) }
        arguments.append(.text(schema.name))
        arguments += Self.conditionArguments(id, scope, condition)
        let shape = WriteShape(
            kind: .update, table: schema.name, isOwned: scope.owner != nil, columns: sorted.map(\.key),
            checksVersion: condition.version != nil, checksDeleted: condition.deleted != nil)
        let statement = try cachedStatement(shape, arguments) {
            var assignments: [SQLFragment] = []
            for (name, value) in sorted {
                assignments.append("\(identifier: name) = \(bind: try SQLValue(json: value))")
            }
            assignments.append("\(identifier: SystemProperty.updatedAt) = \(inline: stampCall(schema))")
            return """
                UPDATE \(identifier: schema.name) SET \(inline: .joined(assignments, separator: ", ")) \
                WHERE \(inline: Self.conditional(id, scope, condition)) RETURNING *
                """
        }
        return try await write(statement, schema, table: table, id: id, change: .written(table: table, scope: scope)) { [self] in
            try current(schema, id: id, scope: scope).map(WriteResult.conflict) ?? .missing
        }
    }

    public func delete(table: String, id: String, scope: RowScope, condition: WriteCondition) async throws -> WriteResult {
        guard let schema = try scoped(table, scope) else { return .missing }
        if batchRows(table, scope) != nil {
            return try await batchWrite(schema, table: table, id: id, scope: scope, condition: condition, removing: true) { _ in }
        }
        let shape = WriteShape(
            kind: .delete, table: schema.name, isOwned: scope.owner != nil, columns: [],
            checksVersion: condition.version != nil, checksDeleted: condition.deleted != nil)
        let statement = cachedStatement(shape, Self.conditionArguments(id, scope, condition)) {
            "DELETE FROM \(identifier: schema.name) WHERE \(inline: Self.conditional(id, scope, condition)) RETURNING *"
        }
        return try await write(statement, schema, table: table, id: id, change: .removed(table: table, scope: scope)) { [self] in
            try current(schema, id: id, scope: scope).map(WriteResult.conflict) ?? .missing
        }
    }

    // MARK: helpers

    /// An insert of a batch (see ``inTransaction(table:scope:ids:_:)``): a conflict when the id has
    /// a row, else the row stamped now, every other column `NULL`.
    private func batchInsert(
        _ values: JSONObject, _ schema: TableSchema, table: String, id: String, scope: RowScope
    ) async throws
        -> WriteResult
    {
        try await observingBatchWrite(table: table, id: id, change: .written(table: table, scope: scope)) { [self] in
            try await decideBatchInsert(values, schema, id: id, scope: scope)
        }
    }

    private func decideBatchInsert(_ values: JSONObject, _ schema: TableSchema, id: String, scope: RowScope) async throws -> WriteResult {
        if let existing = try batchRow(id, schema, scope) { return .conflict(Self.item(existing, schema)) }
        var row: [String: SQLValue] = [:]
        for (name, value) in values {
            let column = try Self.column(name, schema)
            row[column] = Self.stored(try SQLValue(json: value), as: schema.columns[column])
        }
        let stamp = SQLValue.text(clock.next(for: schema.name))
        row[SystemProperty.createdAt] = stamp
        row[SystemProperty.updatedAt] = stamp
        batchRows?.set(ColumnKey(id), row)
        return .written(Self.item(row, schema))
    }

    /// An update or delete of a batch: `.missing` or `.conflict` as the statement would find, else
    /// the row changed by `change` and stamped now (an update), or removed (a delete).
    private func batchWrite(
        _ schema: TableSchema, table: String, id: String, scope: RowScope, condition: WriteCondition, removing: Bool = false,
        change: (inout [String: SQLValue]) throws -> Void
    ) async throws -> WriteResult {
        try await observingBatchWrite(
            table: table, id: id, change: removing ? .removed(table: table, scope: scope) : .written(table: table, scope: scope)
        ) { [self] in
            try await decideBatchWrite(schema, id: id, scope: scope, condition: condition, removing: removing, change: change)
        }
    }

    /// Runs a write of a batch, decided by `decide`, between the observer's two calls.
    private func observingBatchWrite(
        table: String, id: String, change: TableChange, _ decide: () async throws -> WriteResult
    ) async throws -> WriteResult {
        await observer?.write(.committing(updatedAt: nil), table: table, id: id)
        let result = try await decide()
        await observer?.write(.finished, table: table, id: id)
        if case .written = result { announce(change) }
        return result
    }

    private func decideBatchWrite(
        _ schema: TableSchema, id: String, scope: RowScope, condition: WriteCondition, removing: Bool,
        change: (inout [String: SQLValue]) throws -> Void
    ) async throws -> WriteResult {
        guard var row = try batchRow(id, schema, scope) else { return .missing }
        let versionHolds = condition.version.map { row[SystemProperty.version] == .text($0) } ?? true
        let deletedHolds = condition.deleted.map { row[SystemProperty.deleted] == .integer($0 ? 1 : 0) } ?? true
        guard versionHolds && deletedHolds else { return .conflict(Self.item(row, schema)) }
        guard case .text(let storedID)? = row[SystemProperty.id] else { return .missing }
        if removing {
            batchRows?.set(ColumnKey(storedID), nil)
            return .written(Self.item(row, schema))
        }
        try change(&row)
        row[SystemProperty.updatedAt] = .text(clock.next(for: schema.name))
        batchRows?.set(ColumnKey(storedID), row)
        return .written(Self.item(row, schema))
    }

    /// The stored spelling of the column `name` refers to.
    private static func column(_ name: String, _ schema: TableSchema) throws -> String {
        guard let column = schema.column(named: name) else { throw BatchColumnMissing() }
        return column
    }

    /// Runs a write statement: the row it returns is the stored one, and `change` is announced
    /// once it committed (``announce(_:)``); when it returns none (its condition did not hold),
    /// `unmet` says why. The observer sees the write before its statement and once it is done.
    private func write(
        _ statement: SQLStatement, _ schema: TableSchema, table: String, id: String, change: TableChange,
        unmet: () async throws -> WriteResult
    ) async throws -> WriteResult {
        await observer?.write(.committing(updatedAt: nil), table: table, id: id)
        let stored = try await committing { () throws -> JSONObject? in
            let row = try rows(statement, schema).first
            if row != nil, case .removed(_, let scope?) = change { try recordRemoval(schema, scope: scope) }
            return row
        }
        await observer?.write(.finished, table: table, id: id)
        if let stored {
            announce(change)
            return .written(stored)
        }
        return try await unmet()
    }

    /// The call that stamps a write of `schema`'s table, inside the write statement.
    func stampCall(_ schema: TableSchema) -> SQLFragment {
        "\(inline: SQLFragment(raw: Self.stampFunction))(\(bind: .text(schema.name)))"
    }

    /// The row of the scope with `id`.
    private func current(_ schema: TableSchema, id: String, scope: RowScope) throws -> JSONObject? {
        settleCommitGroup()
        let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: Self.key(id, scope))"
        return try rows(sql.statement(in: .sqlite), schema).first
    }

    /// The statement of a single write of `shape` with `arguments` (in text order): its text from
    /// ``writeTexts`` when this shape was seen before, else built by `build` and kept. The text is a
    /// function of the shape alone (values are always bound), so a schema change cannot make a
    /// kept text wrong: a column added or a table created is a new shape.
    private func cachedStatement(
        _ shape: WriteShape, _ arguments: [SQLValue], build: () throws -> SQLFragment
    ) rethrows -> SQLStatement {
        if let sql = writeTexts[shape] { return SQLStatement(sql, arguments) }
        let statement = try build().statement(in: .sqlite)
        // The arguments listed by the caller must be the built statement's, in its order, for
        // the kept text to be used with them; if not, the text is used once and not kept.
        guard statement.arguments == arguments else {
            assertionFailure("The arguments of a \(shape.kind) differ from its statement's")
            return statement
        }
        // Shapes are bounded by the tables' columns, yet a client can vary the subset it sends:
        // the texts are dropped together when there are many.
        if writeTexts.count >= Self.writeTextLimit { writeTexts.removeAll(keepingCapacity: true) }
        writeTexts[shape] = statement.sql
        return statement
    }

    /// How many write texts ``writeTexts`` keeps at most.
    static let writeTextLimit = 256

    /// The values ``conditional(_:_:_:)`` binds, in its order.
    private static func conditionArguments(_ id: String, _ scope: RowScope, _ condition: WriteCondition) -> [SQLValue] {
        var arguments: [SQLValue] = []
        if let owner = scope.owner { arguments.append(.text(owner)) }
        arguments.append(.text(id))
        if let version = condition.version { arguments.append(.text(version)) }
        if let deleted = condition.deleted { arguments.append(.integer(deleted ? 1 : 0)) }
        return arguments
    }

    /// The `WHERE` of a conditional write: the row's key in the scope, its version and deleted
    /// state when the condition names them.
    private static func conditional(_ id: String, _ scope: RowScope, _ condition: WriteCondition) -> SQLFragment {
        var parts = [key(id, scope)]
        if let version = condition.version { parts.append("\(identifier: SystemProperty.version) = \(bind: .text(version))") }
        if let deleted = condition.deleted { parts.append("\(identifier: SystemProperty.deleted) = \(bind: .integer(deleted ? 1 : 0))") }
        return .joined(parts, separator: " AND ")
    }
}

/// What the SQL text of a single write depends on. A few shapes come back on every request, so
/// their text is built once (``SQLiteTableStorage/writeTexts``); the values are bound, never
/// part of the text.
struct WriteShape: Hashable {
    enum Kind: Hashable { case insert, update, delete }
    var kind: Kind
    /// The table's stored name (its spelling is in the text).
    var table: String
    /// Whether the table is per-user (the owner column is written or matched).
    var isOwned: Bool
    /// The columns the write sets, in text order.
    var columns: [String]
    /// Whether the `WHERE` matches the version, the deleted state.
    var checksVersion = false
    var checksDeleted = false
}
