package import SyncSQL
package import SyncWire

/// The sync engine's records in one read transaction: what it reads of the operation queue,
/// the operation errors and the config values, and its reads of items by id.
///
/// Not part of the public store contract. ``SQLiteStore``'s transactions conform, with their
/// own statements (the fast path); for any other store, ``SystemTableRecords`` keeps the same
/// records as rows of system tables through the public ``StoreReader`` / ``StoreWriter`` calls.
/// ``StoreReader/records`` picks one of the two, once per transaction.
package protocol SyncRecordsReader: StoreReader {
    /// The columns of a table, or `nil` when the table does not exist.
    func columns(of table: String) throws -> [String: ColumnType]?
    /// The item with `id` (whatever its ASCII case), or `nil`.
    func lookup(table: String, id: String) throws -> JSONObject?
    /// The items of `table` whose ids are among `ids` (whatever their ASCII case), in no
    /// particular order; ids with no item are left out.
    func lookup(table: String, ids: [String]) throws -> [JSONObject]

    /// The pending operations in queue order, all tables or one.
    func operations(table: String?) throws -> [TableOperationRecord]
    /// The operation with queue id `id`.
    func operation(id: Int64) throws -> TableOperationRecord?
    /// The newest pending operation for an item, if any (item ids match whatever their ASCII case).
    func operation(table: String, itemId: String) throws -> TableOperationRecord?
    /// The first operation after queue id `id`.
    func operation(after id: Int64) throws -> TableOperationRecord?
    /// Up to `limit` operations after queue id `id`, in queue order (a push claims a run with this).
    func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord]
    /// The operations among `ids` that exist, in queue order.
    func operations(ids: [Int64]) throws -> [TableOperationRecord]
    /// The number of pending operations, all tables or one.
    func operationCount(table: String?) throws -> Int

    /// Every stored operation error, oldest first.
    func operationErrors() throws -> [OperationErrorRecord]
    /// The stored errors of one operation.
    func operationErrors(operationId: Int64) throws -> [OperationErrorRecord]

    /// A config value (delta tokens and other settings).
    func configValue(forKey key: String) throws -> String?
}

/// The sync engine's records in one write transaction (see ``SyncRecordsReader``).
package protocol SyncRecordsWriter: StoreWriter, SyncRecordsReader {
    /// Creates a table with these columns, or adds the columns it lacks (column names match
    /// whatever their ASCII case).
    func defineTable(_ table: String, columns: [String: ColumnType]) throws
    /// Deletes every row of a table.
    func deleteAll(table: String) throws

    /// Appends an operation to the queue and returns it with its queue id. Queue ids grow and
    /// are never given twice, also after the newest operation was removed.
    func addOperation(kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?) throws -> TableOperationRecord
    /// Replaces a stored operation (matched by id).
    func updateOperation(_ operation: TableOperationRecord) throws
    /// Removes an operation and its errors.
    func deleteOperation(id: Int64) throws
    /// Removes every operation of a table and their errors.
    func deleteOperations(table: String) throws
    /// Sets the state of the operations `ids` (ids with no operation are passed over).
    func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws
    /// Removes the operations `ids` and their errors (ids with no operation are passed over).
    func deleteOperations(ids: [Int64]) throws

    /// Stores an operation error (replacing one with the same id).
    func addOperationError(_ error: OperationErrorRecord) throws
    /// Removes the errors of one operation.
    func deleteOperationErrors(operationId: Int64) throws
    /// Removes one error by its id.
    func deleteOperationError(id: String) throws

    /// Sets a config value.
    func setConfigValue(_ value: String, forKey key: String) throws
    /// Removes a config value.
    func deleteConfigValue(forKey key: String) throws
    /// Removes every config value whose key starts with `prefix`.
    func deleteConfigValues(withPrefix prefix: String) throws
}

extension StoreReader {
    /// The engine's records of this transaction: the store's own (its fast path) when it keeps
    /// them, else rows of system tables read through the public contract.
    package var records: any SyncRecordsReader {
        self as? any SyncRecordsReader ?? SystemTableRecords(self)
    }
}

extension StoreWriter {
    /// The engine's records of this transaction (see ``StoreReader/records``).
    package var records: any SyncRecordsWriter {
        self as? any SyncRecordsWriter ?? SystemTableRecords(self)
    }
}

/// A store that sizes its caches for a push: the sync engine tells it when a push of about
/// `operations` queued operations starts, and when it ends. ``SQLiteStore`` raises its page cache
/// meanwhile. Not part of the public store contract.
package protocol PushCacheHints: LocalStore {
    /// A push of about `operations` operations starts; ``didPush()`` follows when it ends.
    func willPush(operations: Int) async
    /// The push announced by ``willPush(operations:)`` ended, however it ended.
    func didPush() async
}

// The engine's records, reachable from any transaction of any store (package code and tests name
// them on `any StoreReader` / `any StoreWriter`); each call goes through ``StoreReader/records``.

extension StoreReader {
    package func columns(of table: String) throws -> [String: ColumnType]? { try records.columns(of: table) }
    package func lookup(table: String, ids: [String]) throws -> [JSONObject] { try records.lookup(table: table, ids: ids) }
    package func operations(table: String?) throws -> [TableOperationRecord] { try records.operations(table: table) }
    package func operation(id: Int64) throws -> TableOperationRecord? { try records.operation(id: id) }
    package func operation(table: String, itemId: String) throws -> TableOperationRecord? {
        try records.operation(table: table, itemId: itemId)
    }
    package func operation(after id: Int64) throws -> TableOperationRecord? { try records.operation(after: id) }
    package func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] {
        try records.operations(after: id, limit: limit)
    }
    package func operations(ids: [Int64]) throws -> [TableOperationRecord] { try records.operations(ids: ids) }
    package func operationCount(table: String?) throws -> Int { try records.operationCount(table: table) }
    package func operationErrors() throws -> [OperationErrorRecord] { try records.operationErrors() }
    package func operationErrors(operationId: Int64) throws -> [OperationErrorRecord] {
        try records.operationErrors(operationId: operationId)
    }
    package func configValue(forKey key: String) throws -> String? { try records.configValue(forKey: key) }
}

extension StoreWriter {
    package func defineTable(_ table: String, columns: [String: ColumnType]) throws { try records.defineTable(table, columns: columns) }
    package func addOperation(kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?) throws -> TableOperationRecord {
        try records.addOperation(kind: kind, table: table, itemId: itemId, item: item)
    }
    package func updateOperation(_ operation: TableOperationRecord) throws { try records.updateOperation(operation) }
    package func deleteOperation(id: Int64) throws { try records.deleteOperation(id: id) }
    package func deleteOperations(table: String) throws { try records.deleteOperations(table: table) }
    package func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        try records.setState(state, ofOperations: ids)
    }
    package func deleteOperations(ids: [Int64]) throws { try records.deleteOperations(ids: ids) }
    package func addOperationError(_ error: OperationErrorRecord) throws { try records.addOperationError(error) }
    package func deleteOperationErrors(operationId: Int64) throws { try records.deleteOperationErrors(operationId: operationId) }
    package func deleteOperationError(id: String) throws { try records.deleteOperationError(id: id) }
    package func setConfigValue(_ value: String, forKey key: String) throws { try records.setConfigValue(value, forKey: key) }
    package func deleteConfigValue(forKey key: String) throws { try records.deleteConfigValue(forKey: key) }
    package func deleteConfigValues(withPrefix prefix: String) throws { try records.deleteConfigValues(withPrefix: prefix) }
}
