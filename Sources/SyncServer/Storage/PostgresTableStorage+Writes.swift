import Logging
import PostgresNIO
import SyncSQL
public import SyncWire

/// Writes: each one transaction that locks its table's metadata row, takes the next stamp,
/// records it and writes the row in one statement, then commits (see ``PostgresTableStorage``).
extension PostgresTableStorage {
    public func insert(table: String, scope: RowScope, item: JSONObject) async throws -> WriteResult {
        guard let schema = try await scoped(table, scope), case .string(let id)? = item[SystemProperty.id] else { return .missing }
        var values = schema.storable(item)
        values[SystemProperty.id] = .string(id)
        values[SystemProperty.version] = .string(RowVersion.make())
        values[SystemProperty.deleted] = .bool(false)
        var names: [SQLFragment] = [], written: [SQLFragment] = []
        if let owner = scope.owner {
            names.append("\(identifier: TableSchema.ownerColumn)")
            written.append(.bind(.text(owner)))
        }
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            let column = schema.column(named: name) ?? name
            names.append("\(identifier: column)")
            written.append(try Self.written(value, as: schema.columns[column]))
        }
        let stored = try await write(schema, table: table, id: id, change: .written(table: table, scope: scope)) { stamp in
            """
            INSERT INTO \(identifier: schema.name) (\(inline: .joined(names, separator: ", ")), \
            \(identifier: SystemProperty.createdAt), \(identifier: SystemProperty.updatedAt)) \
            VALUES (\(inline: .joined(written, separator: ", ")), \(bind: .text(stamp)), \(bind: .text(stamp))) \
            ON CONFLICT DO NOTHING RETURNING *
            """
        }
        if let stored { return .written(stored) }
        // The id is taken: the row that has it (if it went away meanwhile, the insert is tried again).
        if let existing = try await current(schema, id: id, scope: scope) { return .conflict(existing) }
        return try await insert(table: table, scope: scope, item: item)
    }

    public func update(table: String, id: String, scope: RowScope, values: JSONObject, condition: WriteCondition) async throws -> WriteResult {
        guard let schema = try await scoped(table, scope) else { return .missing }
        var changes = schema.storable(values)
        changes.removeValue(forKey: SystemProperty.id)
        changes[SystemProperty.version] = .string(RowVersion.make())
        var assignments: [SQLFragment] = []
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
            let column = schema.column(named: name) ?? name
            assignments.append("\(identifier: column) = \(inline: try Self.written(value, as: schema.columns[column]))")
        }
        let stored = try await write(schema, table: table, id: id, change: .written(table: table, scope: scope)) { stamp in
            """
            UPDATE \(identifier: schema.name) SET \(inline: .joined(assignments, separator: ", ")), \
            \(identifier: SystemProperty.updatedAt) = \(bind: .text(stamp)) \
            WHERE \(inline: Self.conditional(id, scope, condition)) RETURNING *
            """
        }
        if let stored { return .written(stored) }
        return try await current(schema, id: id, scope: scope).map(WriteResult.conflict) ?? .missing
    }

    public func delete(table: String, id: String, scope: RowScope, condition: WriteCondition) async throws -> WriteResult {
        guard let schema = try await scoped(table, scope) else { return .missing }
        let stored = try await write(schema, table: table, id: id, change: .removed(table: table, scope: scope)) { _ in
            "DELETE FROM \(identifier: schema.name) WHERE \(inline: Self.conditional(id, scope, condition)) RETURNING *"
        }
        if let stored { return .written(stored) }
        return try await current(schema, id: id, scope: scope).map(WriteResult.conflict) ?? .missing
    }

    // MARK: helpers

    /// Runs a write in its own transaction: locks the table's metadata row, takes the next
    /// stamp after the table's last, and runs `statement(stamp)` together with the statement
    /// that records the stamp (a hard delete also records it as its scope's newest removal),
    /// then `NOTIFY`s the other instances of `change`; returns the row
    /// the write returned (`nil` when its condition did not hold). Once committed, `change` is
    /// announced on this instance's feed (inside an open transaction, once that commits). The
    /// observer sees the write before it waits for the lock, just before it commits (holding the
    /// lock) and once it is done.
    private func write(
        _ schema: TableSchema, table: String, id: String, change: TableChange, statement: (String) -> SQLFragment
    ) async throws -> JSONObject? {
        await observer?.write(.waiting, table: table, id: id)
        let key = Self.metadataKey(schema.name)
        let stored = try await transaction { connection in
            let lock: SQLFragment = """
                SELECT \(identifier: "lastStamp") FROM \(identifier: Self.metadataTable) \
                WHERE \(identifier: "key") = \(bind: .text(key)) FOR UPDATE
                """
            let locked = try await run(counted(lock.statement(in: .postgres)), on: connection)
            let last = locked.first.flatMap { Self.values($0).first?.1.integerValue }
            let milliseconds = WriteStamp.next(after: last)
            let stamp = WriteStamp.text(milliseconds)
            let sql: SQLFragment = """
                WITH \(identifier: "recorded") AS (UPDATE \(identifier: Self.metadataTable) \
                SET \(identifier: "lastStamp") = \(bind: .integer(milliseconds)) WHERE \(identifier: "key") = \(bind: .text(key))) \
                \(inline: statement(stamp))
                """
            let row = try await rows(sql.statement(in: .postgres), schema, on: connection).first
            if row != nil {
                if case .removed(_, let scope) = change { try await recordRemoval(key: key, scope: scope, stamp: stamp, on: connection) }
                // Delivered to every listening instance when (and only if) the transaction commits.
                _ = try await run(counted(notification(change)), on: connection)
            }
            await observer?.write(.committing(updatedAt: stamp), table: table, id: id)
            return row
        }
        await observer?.write(.finished, table: table, id: id)
        if stored != nil { announce(change) }
        return stored
    }

    /// Runs `body` in a transaction on one connection of the pool (``leased(_:)``), committed
    /// when it returns and rolled back when it throws; the error thrown is the one that failed
    /// it. Every statement of it, `BEGIN`, `COMMIT` and `ROLLBACK` included, goes through
    /// ``run(_:on:)``, so none waits on a closed connection. A connection lost before the commit
    /// was sent is a ``StorageUnavailableError`` (nothing was applied); one lost while it
    /// committed is a ``StorageOutcomeUnknownError``.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        // Inside an open transaction, the body is part of it.
        if let connection = transactionConnection { return try await body(connection) }
        return try await leased { connection in
            _ = try await run("BEGIN", on: connection)
            let value: T
            do {
                value = try await body(connection)
            } catch {
                // A closed connection's transaction ends with its session.
                _ = try? await run("ROLLBACK", on: connection)
                throw error
            }
            do {
                _ = try await run("COMMIT", on: connection)
            } catch let error as PSQLError where Self.isConnectionLoss(error) {
                throw StorageOutcomeUnknownError()
            }
            return value
        }
    }

    /// The `WHERE` of a conditional write: the row's key in the scope, its version and deleted
    /// state when the condition names them.
    private static func conditional(_ id: String, _ scope: RowScope, _ condition: WriteCondition) -> SQLFragment {
        var parts = [key(id, scope)]
        if let version = condition.version { parts.append("\(identifier: SystemProperty.version) = \(bind: .text(version))") }
        if let deleted = condition.deleted { parts.append("\(identifier: SystemProperty.deleted) = \(inline: PostgresDialect().boolean(deleted))") }
        return .joined(parts, separator: " AND ")
    }
}
