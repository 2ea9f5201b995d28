package import SyncSQL
package import SyncWire

/// A writer of the engine's records (``SyncRecordsWriter``) that forwards every call to another
/// one and records the topics the calls change, for the store to publish once the transaction has
/// committed.
///
/// ``SQLiteStore`` wraps each write transaction's session in one; the sync engine puts one in
/// front of the writes it makes to a ``LocalStore`` that publishes no changes of its own (or none
/// of the engine's records, which such a store keeps as rows of system tables).
/// Not Sendable: it lives for one transaction, like the writer it wraps.
package final class ChangeRecordingWriter: SyncRecordsWriter {
    private let base: any SyncRecordsWriter
    /// The topics changed so far by this transaction.
    package private(set) var topics: Set<StoreChangeTopic> = []

    /// A recorder in front of `base`.
    /// - Parameter base: the transaction's writer.
    package init(_ base: any SyncRecordsWriter) {
        self.base = base
    }

    // MARK: reads (forwarded, record nothing)

    /// Forwarded to the wrapped writer.
    package func columns(of table: String) throws -> [String: ColumnType]? { try base.columns(of: table) }
    /// Forwarded to the wrapped writer.
    package func read(_ query: QueryDescription) throws -> QueryResult { try base.read(query) }
    /// Forwarded to the wrapped writer.
    package func lookup(table: String, id: String) throws -> JSONObject? { try base.lookup(table: table, id: id) }
    /// Forwarded to the wrapped writer.
    package func operations(table: String?) throws -> [TableOperationRecord] { try base.operations(table: table) }
    /// Forwarded to the wrapped writer.
    package func operation(id: Int64) throws -> TableOperationRecord? { try base.operation(id: id) }
    /// Forwarded to the wrapped writer.
    package func operation(table: String, itemId: String) throws -> TableOperationRecord? {
        try base.operation(table: table, itemId: itemId)
    }
    /// Forwarded to the wrapped writer.
    package func operation(after id: Int64) throws -> TableOperationRecord? { try base.operation(after: id) }
    /// Forwarded to the wrapped writer.
    package func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] {
        try base.operations(after: id, limit: limit)
    }
    /// Forwarded to the wrapped writer.
    package func operations(ids: [Int64]) throws -> [TableOperationRecord] { try base.operations(ids: ids) }
    /// Forwarded to the wrapped writer.
    package func lookup(table: String, ids: [String]) throws -> [JSONObject] { try base.lookup(table: table, ids: ids) }
    /// Forwarded to the wrapped writer.
    package func operationCount(table: String?) throws -> Int { try base.operationCount(table: table) }
    /// Forwarded to the wrapped writer.
    package func operationErrors() throws -> [OperationErrorRecord] { try base.operationErrors() }
    /// Forwarded to the wrapped writer.
    package func operationErrors(operationId: Int64) throws -> [OperationErrorRecord] {
        try base.operationErrors(operationId: operationId)
    }
    /// Forwarded to the wrapped writer.
    package func configValue(forKey key: String) throws -> String? { try base.configValue(forKey: key) }

    // MARK: writes (forwarded, then recorded)

    /// Defines columns; rows do not change, so nothing is recorded.
    package func defineTable(_ table: String, columns: [String: ColumnType]) throws {
        try base.defineTable(table, columns: columns)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        try base.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns)
        if !items.isEmpty { topics.insert(.table(named: table)) }
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func delete(table: String, ids: [String]) throws {
        try base.delete(table: table, ids: ids)
        if !ids.isEmpty { topics.insert(.table(named: table)) }
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func delete(_ query: QueryDescription) throws {
        try base.delete(query)
        topics.insert(.table(named: query.table))
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteAll(table: String) throws {
        try base.deleteAll(table: table)
        topics.insert(.table(named: table))
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func addOperation(
        kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?
    ) throws -> TableOperationRecord {
        let record = try base.addOperation(kind: kind, table: table, itemId: itemId, item: item)
        topics.insert(.operations)
        return record
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func updateOperation(_ operation: TableOperationRecord) throws {
        try base.updateOperation(operation)
        topics.insert(.operations)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteOperation(id: Int64) throws {
        try base.deleteOperation(id: id)
        topics.formUnion([.operations, .operationErrors])
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteOperations(table: String) throws {
        try base.deleteOperations(table: table)
        topics.formUnion([.operations, .operationErrors])
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        try base.setState(state, ofOperations: ids)
        if !ids.isEmpty { topics.insert(.operations) }
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteOperations(ids: [Int64]) throws {
        try base.deleteOperations(ids: ids)
        if !ids.isEmpty { topics.formUnion([.operations, .operationErrors]) }
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func addOperationError(_ error: OperationErrorRecord) throws {
        try base.addOperationError(error)
        topics.insert(.operationErrors)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteOperationErrors(operationId: Int64) throws {
        try base.deleteOperationErrors(operationId: operationId)
        topics.insert(.operationErrors)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteOperationError(id: String) throws {
        try base.deleteOperationError(id: id)
        topics.insert(.operationErrors)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func setConfigValue(_ value: String, forKey key: String) throws {
        try base.setConfigValue(value, forKey: key)
        topics.insert(.config)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteConfigValue(forKey key: String) throws {
        try base.deleteConfigValue(forKey: key)
        topics.insert(.config)
    }

    /// Forwarded to the wrapped writer; records what it changes.
    package func deleteConfigValues(withPrefix prefix: String) throws {
        try base.deleteConfigValues(withPrefix: prefix)
        topics.insert(.config)
    }
}
