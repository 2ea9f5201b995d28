import Foundation
public import SyncSQL
public import SyncWire

/// Reads of a local store inside one transaction: user tables and the sync system tables.
///
/// Implementations are used only inside ``LocalStore/read(_:)`` / ``LocalStore/write(_:)``
/// closures, which are synchronous: a transaction never spans an `await`.
public protocol StoreReader {
    /// The columns of a user table, or `nil` when the table does not exist.
    func columns(of table: String) throws -> [String: ColumnType]?
    /// Runs a query on a user table. A table that does not exist reads as empty.
    func read(_ query: QueryDescription) throws -> QueryResult
    /// The item with `id`, or `nil`. Not finding it is not an error. Ids match whatever the
    /// ASCII case of their letters (`ONE` finds `one`).
    func lookup(table: String, id: String) throws -> JSONObject?

    /// The pending operations in queue order, all tables or one.
    func operations(table: String?) throws -> [TableOperationRecord]
    /// The operation with queue id `id`.
    func operation(id: Int64) throws -> TableOperationRecord?
    /// The newest pending operation for an item, if any (item ids match whatever their ASCII case).
    func operation(table: String, itemId: String) throws -> TableOperationRecord?
    /// The first operation after queue id `id` (the push walks the queue with this).
    func operation(after id: Int64) throws -> TableOperationRecord?
    /// Up to `limit` operations after queue id `id`, in queue order (the push claims a run of
    /// the queue with this).
    func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord]
    /// The operations among `ids` that exist, in queue order.
    func operations(ids: [Int64]) throws -> [TableOperationRecord]
    /// The items of `table` whose ids are among `ids` (ids match whatever their ASCII case), in
    /// no particular order; ids with no item are left out.
    func lookup(table: String, ids: [String]) throws -> [JSONObject]
    /// The number of pending operations, all tables or one.
    func operationCount(table: String?) throws -> Int

    /// Every stored operation error, oldest first.
    func operationErrors() throws -> [OperationErrorRecord]
    /// The stored errors of one operation.
    func operationErrors(operationId: Int64) throws -> [OperationErrorRecord]

    /// A value of the config table (delta tokens and other settings).
    func configValue(forKey key: String) throws -> String?
}

/// Writes to a local store inside one write transaction; all of them commit together.
public protocol StoreWriter: StoreReader {
    /// Creates a user table with these columns, or adds the columns it lacks.
    ///
    /// Column names match without regard to ASCII case, as in SQLite: a column that differs from
    /// an existing one only by case is that column.
    func defineTable(_ table: String, columns: [String: ColumnType]) throws
    /// Inserts or updates items by `id`. New properties add columns (typed from their values)
    /// unless `ignoreMissingColumns`, which drops them instead. Every item needs a string `id`.
    ///
    /// A property whose name differs from a column's only by ASCII case is stored in that column,
    /// which keeps its spelling (reads return the column's spelling). An item with two properties
    /// that differ only by case is refused.
    ///
    /// Ids match whatever their ASCII case: an item whose id differs from a row's only by case
    /// updates that row, which keeps the id as first written. The protocol's `deleted` flag (any
    /// case) is not stored: a local row is an item that exists (the sync engine deletes the rows
    /// the server reports deleted), so the flag never becomes a column.
    func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws
    /// Deletes items by id (whatever the ASCII case); missing ids are not an error.
    func delete(table: String, ids: [String]) throws
    /// Deletes the rows a query matches (top/skip/order are ignored).
    func delete(_ query: QueryDescription) throws
    /// Deletes every row of a user table (the table itself stays).
    func deleteAll(table: String) throws

    /// Appends an operation to the queue and returns it with its queue id.
    func addOperation(
        kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?
    ) throws -> TableOperationRecord
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

    /// Stores an operation error.
    func addOperationError(_ error: OperationErrorRecord) throws
    /// Removes the errors of one operation.
    func deleteOperationErrors(operationId: Int64) throws
    /// Removes one error by its id.
    func deleteOperationError(id: String) throws

    /// Sets a value of the config table.
    func setConfigValue(_ value: String, forKey key: String) throws
    /// Removes a value of the config table.
    func deleteConfigValue(forKey key: String) throws
    /// Removes every config value whose key starts with `prefix`.
    func deleteConfigValues(withPrefix prefix: String) throws
}

extension StoreReader {
    /// Reads the run one operation at a time, through ``operation(after:)``.
    /// - Parameters:
    ///   - id: The queue id the run starts after.
    ///   - limit: The most operations to read.
    /// - Returns: the operations, in queue order.
    /// - Throws: what ``operation(after:)`` throws.
    public func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] {
        var found: [TableOperationRecord] = []
        var after = id
        while found.count < limit, let operation = try operation(after: after) {
            found.append(operation)
            after = operation.id
        }
        return found
    }

    /// Reads the operations one at a time, through ``operation(id:)``.
    /// - Parameter ids: The queue ids.
    /// - Returns: the operations that exist, in queue order.
    /// - Throws: what ``operation(id:)`` throws.
    public func operations(ids: [Int64]) throws -> [TableOperationRecord] {
        try Set(ids).sorted().compactMap { try operation(id: $0) }
    }

    /// Reads the items one at a time, through ``lookup(table:id:)``.
    /// - Parameters:
    ///   - table: The user table.
    ///   - ids: The item ids.
    /// - Returns: the items found.
    /// - Throws: what ``lookup(table:id:)`` throws.
    public func lookup(table: String, ids: [String]) throws -> [JSONObject] {
        try ids.compactMap { try lookup(table: table, id: $0) }
    }
}

extension StoreWriter {
    /// Sets each operation's state through ``updateOperation(_:)``.
    /// - Parameters:
    ///   - state: The new state.
    ///   - ids: The queue ids.
    /// - Throws: what ``operation(id:)`` and ``updateOperation(_:)`` throw.
    public func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        for id in ids {
            guard var operation = try operation(id: id) else { continue }
            operation.state = state
            try updateOperation(operation)
        }
    }

    /// Removes each operation through ``deleteOperation(id:)``.
    /// - Parameter ids: The queue ids.
    /// - Throws: what ``deleteOperation(id:)`` throws.
    public func deleteOperations(ids: [Int64]) throws {
        for id in ids { try deleteOperation(id: id) }
    }
}

/// The local store of the sync engine: user tables plus the operation queue, the operation
/// errors and the config values (delta tokens), all in one database so that a data change and
/// its queue entry commit in one transaction.
///
/// ``SQLiteStore`` is the implementation, plain or encrypted; other stores can conform.
public protocol LocalStore: Sendable {
    /// Runs `body` in a read transaction.
    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T
    /// Runs `body` in one write transaction: everything it writes commits, or nothing does.
    func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T
    /// The store's change feed: after each committed write transaction, the topics it changed
    /// (see ``StoreChanges``); `nil` when the store cannot tell, and then the sync engine records
    /// the changes it makes itself (writes that bypass it are not seen).
    var changes: StoreChanges? { get }

    /// A hint from the sync engine: a push of about `operations` queued operations starts, and
    /// ``didPush()`` follows when it ends. A store may size its caches for the push's working set
    /// (the operations and the rows they name) meanwhile.
    func willPush(operations: Int) async
    /// The push announced by ``willPush(operations:)`` ended, however it ended.
    func didPush() async
}

extension LocalStore {
    /// A store publishes no changes unless it says otherwise.
    public var changes: StoreChanges? { nil }

    /// A store takes no hint unless it says otherwise.
    public func willPush(operations: Int) async {}

    /// A store takes no hint unless it says otherwise.
    public func didPush() async {}

    /// Runs a query on a user table.
    public func read(_ query: QueryDescription) async throws -> QueryResult {
        try await read { try $0.read(query) }
    }

    /// The item with `id` in `table`, or `nil`.
    public func lookup(table: String, id: String) async throws -> JSONObject? {
        try await read { try $0.lookup(table: table, id: id) }
    }

    /// Inserts or updates items in one transaction.
    public func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool = false) async throws {
        try await write { try $0.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns) }
    }

    /// Deletes items by id in one transaction.
    public func delete(table: String, ids: [String]) async throws {
        try await write { try $0.delete(table: table, ids: ids) }
    }

    /// Deletes the rows a query matches in one transaction.
    public func delete(_ query: QueryDescription) async throws {
        try await write { try $0.delete(query) }
    }
}
