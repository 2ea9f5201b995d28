import Foundation
public import SyncWire

/// Reads of a local store inside one transaction.
///
/// One requirement: a query. Implementations are used only inside
/// ``LocalStore/read(_:)`` / ``LocalStore/write(_:)`` closures, which are synchronous: a
/// transaction never spans an `await`.
///
/// The sync engine keeps its own records (the operation queue, the operation errors, the delta
/// tokens) as rows of tables whose names start with `__`, read and written through these same
/// calls: a store keeps those tables as it keeps any other.
public protocol StoreReader {
    /// Runs a query on a table: its filter, order, `top`/`skip`, selection and total count.
    ///
    /// A table that does not exist reads as empty. The `id` column compares its values without
    /// regard to ASCII case (a filter `id eq 'ONE'` finds the item `one`), as ``StoreWriter``'s
    /// writes do. A property a row lacks reads as `null`.
    ///
    /// - Parameter query: the table and the query options.
    /// - Returns: the items, and their total count when `includeTotalCount` was asked for.
    /// - Throws: `StoreError.invalidQuery` for a query the store cannot evaluate.
    func read(_ query: QueryDescription) throws -> QueryResult
}

/// Writes to a local store inside one write transaction; all of them commit together.
///
/// Three requirements: an upsert and two deletes. Tables need no schema: an upsert creates the
/// table it names and the properties it brings.
public protocol StoreWriter: StoreReader {
    /// Inserts or updates items by `id`, creating the table when it does not exist.
    ///
    /// New properties add columns unless `ignoreMissingColumns`, which drops them instead. Every
    /// item needs a string `id`. A property whose name differs from a column's only by ASCII case
    /// is stored in that column, which keeps its spelling. Ids match whatever their ASCII case:
    /// an item whose id differs from a row's only by case updates that row, which keeps the id as
    /// first written. An update replaces the properties the item names and keeps the others. The
    /// protocol's `deleted` flag (any case) is not stored.
    ///
    /// - Parameters:
    ///   - table: the table's name.
    ///   - items: the items.
    ///   - ignoreMissingColumns: drop properties that have no column instead of adding columns.
    /// - Throws: `StoreError.invalidItem` for an item without a string `id`.
    func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws

    /// Deletes items by id (whatever the ASCII case); missing ids are not an error.
    ///
    /// - Parameters:
    ///   - table: the table's name.
    ///   - ids: the ids of the items to delete.
    /// - Throws: the store's error.
    func delete(table: String, ids: [String]) throws

    /// Deletes the rows a query's filter matches (every row without a filter); `top`, `skip`
    /// and the order are ignored.
    ///
    /// - Parameter query: the table and the filter.
    /// - Throws: `StoreError.invalidQuery` for a filter the store cannot evaluate.
    func delete(_ query: QueryDescription) throws
}

extension StoreReader {
    /// The item with `id`, or `nil`: not finding it is not an error. Ids match whatever the
    /// ASCII case of their letters (`ONE` finds `one`).
    ///
    /// - Parameters:
    ///   - table: the table's name.
    ///   - id: the item's id.
    /// - Returns: the item, or `nil`.
    /// - Throws: what ``read(_:)`` throws.
    public func lookup(table: String, id: String) throws -> JSONObject? {
        try records.lookup(table: table, id: id)
    }
}

extension StoreWriter {
    /// Deletes every row of a table (the table itself stays).
    ///
    /// - Parameter table: the table's name.
    /// - Throws: what ``delete(_:)`` throws.
    public func deleteAll(table: String) throws {
        try records.deleteAll(table: table)
    }
}

/// The local store of the sync engine: tables of items, plus the engine's own records (operation
/// queue, operation errors, delta tokens), all in one store so that a data change and its queue
/// entry commit in one transaction.
///
/// ``SQLiteStore`` is the implementation, plain or encrypted. Another store conforms with the
/// three requirements here and the four of ``StoreReader`` and ``StoreWriter``; the sync engine
/// keeps everything else (the queue's rules, the records' layout) itself. The conformance suite
/// (the `CipherSyncStoreConformance` product) checks a store against this contract.
public protocol LocalStore: Sendable {
    /// Runs `body` in a read transaction: it sees the committed state, whole.
    ///
    /// - Parameter body: the reads.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or the store's error.
    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T

    /// Runs `body` in one write transaction: everything it writes commits, or nothing does (a
    /// `body` that throws leaves the store as it was). Write transactions do not overlap.
    ///
    /// - Parameter body: the writes (and reads, which see the transaction's own writes).
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or the store's error.
    func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T

    /// The store's change feed: after each committed write transaction, the topics it changed
    /// (see ``StoreChanges``); `nil` when the store cannot tell, and then the sync engine records
    /// the changes it makes itself (writes that bypass it are not seen).
    var changes: StoreChanges? { get }
}

extension LocalStore {
    /// A store publishes no changes unless it says otherwise.
    public var changes: StoreChanges? { nil }

    /// Runs a query on a user table.
    /// - Parameter query: the table and the query options.
    /// - Returns: the items.
    /// - Throws: what ``StoreReader/read(_:)`` throws.
    public func read(_ query: QueryDescription) async throws -> QueryResult {
        try await read { try $0.read(query) }
    }

    /// The item with `id` in `table`, or `nil`.
    /// - Parameters:
    ///   - table: the table's name.
    ///   - id: the item's id.
    /// - Returns: the item, or `nil`.
    /// - Throws: what ``StoreReader/read(_:)`` throws.
    public func lookup(table: String, id: String) async throws -> JSONObject? {
        try await read { try $0.lookup(table: table, id: id) }
    }

    /// Inserts or updates items in one transaction.
    /// - Parameters:
    ///   - table: the table's name.
    ///   - items: the items.
    ///   - ignoreMissingColumns: drop properties that have no column instead of adding columns.
    /// - Throws: what ``StoreWriter/upsert(table:items:ignoreMissingColumns:)`` throws.
    public func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool = false) async throws {
        try await write { try $0.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns) }
    }

    /// Deletes items by id in one transaction.
    /// - Parameters:
    ///   - table: the table's name.
    ///   - ids: the ids of the items to delete.
    /// - Throws: what ``StoreWriter/delete(table:ids:)`` throws.
    public func delete(table: String, ids: [String]) async throws {
        try await write { try $0.delete(table: table, ids: ids) }
    }

    /// Deletes the rows a query matches in one transaction.
    /// - Parameter query: the table and the filter.
    /// - Throws: what ``StoreWriter/delete(_:)`` throws.
    public func delete(_ query: QueryDescription) async throws {
        try await write { try $0.delete(query) }
    }
}
