import Foundation
import SyncSQL
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization

/// A store spy that forwards to a real store, counts the transactions it was asked for, and fails
/// on demand (for store-failure cases).
final class FaultyStore: LocalStore, PushCacheHints {
    enum Fault: Hashable, Sendable {
        /// Reading a config value (delta token) throws.
        case configRead
        /// Every write transaction throws before running.
        case write
        /// Storing items (`upsert`) throws, inside a transaction that may have written already.
        case storeItems
    }

    struct InjectedFailure: Error {}

    let inner: SQLiteStore
    private let faults = Mutex<Set<Fault>>([])
    private let counts = Mutex((reads: 0, writes: 0))
    private let hintLog = Mutex<[PushHint]>([])
    private let writeHook = Mutex<(@Sendable (Int) async throws -> Void)?>(nil)
    private let writtenHook = Mutex<(@Sendable (Int) async -> Void)?>(nil)

    /// A push hint the spy passed on, with the store's page cache setting after it.
    struct PushHint: Hashable, Sendable {
        /// The operations `willPush` announced; `nil` for `didPush`.
        let operations: Int?
        /// The store's `PRAGMA cache_size` once the hint was taken.
        let cacheSize: Int64?
    }

    init(_ inner: SQLiteStore) { self.inner = inner }

    func set(_ fault: Fault, _ on: Bool = true) {
        faults.withLock { faults in
            if on { faults.insert(fault) } else { faults.remove(fault) }
        }
    }

    func has(_ fault: Fault) -> Bool { faults.withLock { $0.contains(fault) } }

    /// Runs `hook` before each later write transaction, with the transaction's number (counted
    /// from the store's first, failed ones included); what it throws fails the transaction.
    func beforeEachWrite(_ hook: @escaping @Sendable (Int) async throws -> Void) {
        writeHook.withLock { $0 = hook }
    }

    /// Runs `hook` after each later write transaction that committed, with its number.
    func afterEachWrite(_ hook: @escaping @Sendable (Int) async -> Void) {
        writtenHook.withLock { $0 = hook }
    }

    /// The push hints passed on so far, in order.
    var hints: [PushHint] { hintLog.withLock { $0 } }

    func willPush(operations: Int) async {
        await inner.willPush(operations: operations)
        let cacheSize = try? await inner.pageCacheSetting()
        hintLog.withLock { $0.append(PushHint(operations: operations, cacheSize: cacheSize)) }
    }

    func didPush() async {
        await inner.didPush()
        let cacheSize = try? await inner.pageCacheSetting()
        hintLog.withLock { $0.append(PushHint(operations: nil, cacheSize: cacheSize)) }
    }

    /// The read and write transactions asked for so far (failed ones included).
    var transactions: (reads: Int, writes: Int) { counts.withLock { $0 } }

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
        counts.withLock { $0.reads += 1 }
        let failConfig = has(.configRead)
        return try await inner.read { try body(FaultyReader(inner: $0, failConfig: failConfig)) }
    }

    func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
        let number = counts.withLock { counts in
            counts.writes += 1
            return counts.writes
        }
        if let hook = writeHook.withLock({ $0 }) { try await hook(number) }
        if has(.write) { throw InjectedFailure() }
        let (failConfig, failItems) = (has(.configRead), has(.storeItems))
        let result = try await inner.write { try body(FaultyWriter(inner: $0, failConfig: failConfig, failItems: failItems)) }
        if let hook = writtenHook.withLock({ $0 }) { await hook(number) }
        return result
    }
}

/// Forwards every read, failing config reads when asked.
class FaultyReader: SyncRecordsReader {
    let reader: any StoreReader
    let failConfig: Bool

    init(inner: any StoreReader, failConfig: Bool) {
        self.reader = inner
        self.failConfig = failConfig
    }

    func columns(of table: String) throws -> [String: ColumnType]? { try reader.columns(of: table) }
    func read(_ query: QueryDescription) throws -> QueryResult { try reader.read(query) }
    func lookup(table: String, id: String) throws -> JSONObject? { try reader.lookup(table: table, id: id) }
    func operations(table: String?) throws -> [TableOperationRecord] { try reader.operations(table: table) }
    func operation(id: Int64) throws -> TableOperationRecord? { try reader.operation(id: id) }
    func operation(table: String, itemId: String) throws -> TableOperationRecord? {
        try reader.operation(table: table, itemId: itemId)
    }
    func operation(after id: Int64) throws -> TableOperationRecord? { try reader.operation(after: id) }
    func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] { try reader.operations(after: id, limit: limit) }
    func operations(ids: [Int64]) throws -> [TableOperationRecord] { try reader.operations(ids: ids) }
    func lookup(table: String, ids: [String]) throws -> [JSONObject] { try reader.lookup(table: table, ids: ids) }
    func operationCount(table: String?) throws -> Int { try reader.operationCount(table: table) }
    func operationErrors() throws -> [OperationErrorRecord] { try reader.operationErrors() }
    func operationErrors(operationId: Int64) throws -> [OperationErrorRecord] {
        try reader.operationErrors(operationId: operationId)
    }
    func configValue(forKey key: String) throws -> String? {
        if failConfig { throw FaultyStore.InjectedFailure() }
        return try reader.configValue(forKey: key)
    }
}

/// Forwards every write, failing the storing of items when asked.
final class FaultyWriter: FaultyReader, SyncRecordsWriter {
    let writer: any StoreWriter
    let failItems: Bool

    init(inner: any StoreWriter, failConfig: Bool, failItems: Bool) {
        self.writer = inner
        self.failItems = failItems
        super.init(inner: inner, failConfig: failConfig)
    }

    func defineTable(_ table: String, columns: [String: ColumnType]) throws { try writer.defineTable(table, columns: columns) }
    func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        if failItems { throw FaultyStore.InjectedFailure() }
        try writer.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns)
    }
    func delete(table: String, ids: [String]) throws { try writer.delete(table: table, ids: ids) }
    func delete(_ query: QueryDescription) throws { try writer.delete(query) }
    func deleteAll(table: String) throws { try writer.deleteAll(table: table) }
    func addOperation(
        kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?
    ) throws
        -> TableOperationRecord
    {
        try writer.addOperation(kind: kind, table: table, itemId: itemId, item: item)
    }
    func updateOperation(_ operation: TableOperationRecord) throws { try writer.updateOperation(operation) }
    func deleteOperation(id: Int64) throws { try writer.deleteOperation(id: id) }
    func deleteOperations(table: String) throws { try writer.deleteOperations(table: table) }
    func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        try writer.setState(state, ofOperations: ids)
    }
    func deleteOperations(ids: [Int64]) throws { try writer.deleteOperations(ids: ids) }
    func addOperationError(_ error: OperationErrorRecord) throws { try writer.addOperationError(error) }
    func deleteOperationErrors(operationId: Int64) throws { try writer.deleteOperationErrors(operationId: operationId) }
    func deleteOperationError(id: String) throws { try writer.deleteOperationError(id: id) }
    func setConfigValue(_ value: String, forKey key: String) throws { try writer.setConfigValue(value, forKey: key) }
    func deleteConfigValue(forKey key: String) throws { try writer.deleteConfigValue(forKey: key) }
    func deleteConfigValues(withPrefix prefix: String) throws { try writer.deleteConfigValues(withPrefix: prefix) }
}
